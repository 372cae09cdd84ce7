package manifest

import (
	"slices"
	"testing"
)

func TestCredentialEnv(t *testing.T) {
	m, err := Parse("harness.yml", []byte(`plugins:
  - id: llm
    name: llm-openai
    config:
      apiKeyEnv: DS_LLM_CRED_X
      headers: { X-Api-Key: !env [HDR_KEY_VAR, none], Accept: !env ACCEPT_VAR }
  - id: other
    name: something
    disabled: true
    config: { token: !env OTHER_TOKEN_SRC, tokenEnv: PLAIN_NAME, modelEnv: NOT_A_SECRET, apiKeyEnv: DS_LLM_CRED_X }
  - id: group
    group: true
    config:
      - id: nested
        name: nested
        config: { auth: { password: !env NESTED_PW } }
`))
	if err != nil {
		t.Fatal(err)
	}
	got := m.CredentialEnv()
	want := []string{"DS_LLM_CRED_X", "HDR_KEY_VAR", "OTHER_TOKEN_SRC", "PLAIN_NAME", "NESTED_PW"}
	if !slices.Equal(got, want) {
		t.Errorf("CredentialEnv() = %q, want %q", got, want)
	}
}

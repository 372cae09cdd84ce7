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
	want := []string{"DS_LLM_CRED_X", "HDR_KEY_VAR", "ACCEPT_VAR", "OTHER_TOKEN_SRC", "PLAIN_NAME", "NESTED_PW"}
	if !slices.Equal(got, want) {
		t.Errorf("CredentialEnv() = %q, want %q", got, want)
	}
}

// TestCredentialEnvPatchInsert: `!env` in the config of a row a patch
// inserts is accepted (M6), nested or not, and every variable any layer
// reads with `!env` joins the concealed set, whatever its key (M5).
func TestCredentialEnvPatchInsert(t *testing.T) {
	m, err := Parse("harness.yml", []byte(`plugins:
  - id: local
    name: llm-openai
    config: { headers: { X-Custom: !env MYCRED } }
  - id: grp
    group: true
    config: []
`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParsePatch("ins.yml", []byte(`- insert:
    - id: mcp
      name: mcp
      config:
        callTimeout: !env CT
        servers:
          docs: { url: "http://127.0.0.1:1/mcp", headers: { Authorization: !env DOCS_AUTH } }
        extra: !append [ !env [APPENDED_VAR, x] ]
- id: grp
  insert: [ { name: tool-x, config: { a: !env IN_GROUP } } ]
- id: local
  config: { timeout: !env PATCHED_TIMEOUT }
`))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compose(m, p)
	if err != nil {
		t.Fatal(err)
	}
	got := c.CredentialEnv()
	for _, want := range []string{"CT", "DOCS_AUTH", "APPENDED_VAR", "IN_GROUP", "PATCHED_TIMEOUT"} {
		if !slices.Contains(got, want) {
			t.Errorf("CredentialEnv() = %q, missing %s", got, want)
		}
	}
	for _, bad := range []string{"- insert: !env ROWS\n", "- id: x\n  name: !env N\n"} {
		if _, err := ParsePatch("bad.yml", []byte(bad)); err == nil {
			t.Errorf("ParsePatch(%q) accepted !env outside a config", bad)
		}
	}
}

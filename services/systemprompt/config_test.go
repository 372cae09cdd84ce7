package systemprompt

import (
	"testing"

	"github.com/dshgo/harness/core/manifest"
)

// The dsh-shaped "configure the prompt" row (reference C2) decodes, and the
// identity section carries dsh's fixed sentence.
func TestConfigDecodesTheReferenceKeys(t *testing.T) {
	m, err := manifest.Parse("harness.yml", []byte(`plugins:
  - id: prompt
    name: systemprompt
    config:
      includeHarnessIdentity: false
      includeRuntimeContext: false
      personaPrefix: "You are careful."
      toolOrder: ["<unlisted-tools>"]
`))
	if err != nil {
		t.Fatal(err)
	}
	v, err := manifest.DecodeConfig(Plugin, m.Flatten()[0], nil)
	if err != nil {
		t.Fatalf("DecodeConfig: %v", err)
	}
	cfg := *v.(*Config)
	if cfg.IncludeHarnessIdentity || cfg.IncludeRuntimeContext || cfg.PersonaPrefix != "You are careful." {
		t.Errorf("decoded %+v", cfg)
	}
	if !DefaultConfig().IncludeHarnessIdentity {
		t.Error("includeHarnessIdentity does not default to true")
	}
	if want := "You are an AI agent running in harness."; IdentityText != want {
		t.Errorf("IdentityText = %q, want %q", IdentityText, want)
	}
}

package permission

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/dshgo/harness/core/manifest"
)

// policyOf composes the repository's harness.yml with a patch and compiles
// its permission row.
func policyOf(t *testing.T, patchFile string, patch []byte) *Policy {
	t.Helper()
	m, err := manifest.ReadFile(filepath.Join("..", "..", "harness.yml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := manifest.ParsePatch(patchFile, patch)
	if err != nil {
		t.Fatal(err)
	}
	if m, err = manifest.Compose(m, p); err != nil {
		t.Fatal(err)
	}
	for _, e := range m.Flatten() {
		if e.ID != "permission" {
			continue
		}
		v, err := manifest.DecodeConfig(Plugin, e, nil)
		if err != nil {
			t.Fatal(err)
		}
		pol, err := New(v.(*Config).spec())
		if err != nil {
			t.Fatal(err)
		}
		return pol
	}
	t.Fatal("harness.yml has no permission row")
	return nil
}

// The plugin guide's word-count.yml, over the default harness.yml, lets
// `harness tool word_count …` run headless (no ask), and keeps the standard
// read-only tools read-only.
func TestPluginGuideWordCountPatchRunsTheTool(t *testing.T) {
	guide, err := os.ReadFile(filepath.Join("..", "..", "docs", "plugin-authors.md"))
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)```yaml\n# word-count.yml\n(.*?)```").FindSubmatch(guide)
	if block == nil {
		t.Fatal("docs/plugin-authors.md has no word-count.yml block")
	}
	pol := policyOf(t, "word-count.yml", block[1])
	args, _ := json.Marshal(map[string]any{"text": "a bb ccc", "min": 2})
	if v := pol.Evaluate(Call{Tool: "word_count", Args: args}); v.Decision != Allow {
		t.Fatalf("word_count: %+v", v)
	}
	for _, tool := range []string{"read", "grep", "glob"} {
		if !pol.ReadOnly(tool) {
			t.Errorf("%s is no longer read-only", tool)
		}
	}
}

// A patch `{id: permission, config: {mode: bypass}}` over the repository's
// harness.yml switches the mode and keeps the deny list: deny rules hold in
// every mode, also when the mode comes from a patch layer.
func TestBypassPatchKeepsDefaultDenyRules(t *testing.T) {
	pol := policyOf(t, "bypass.yml", []byte("- id: permission\n  config: {mode: bypass}\n"))
	if pol.Mode() != ModeBypass {
		t.Fatalf("mode = %s, want bypass", pol.Mode())
	}
	for _, tc := range []struct {
		command string
		want    Decision
	}{
		{"rm -rf /tmp/x", Deny},
		{"sudo ls", Deny},
		{"curl -fsSL https://example.com", Allow},
	} {
		args, _ := json.Marshal(map[string]string{"command": tc.command})
		if got := pol.Evaluate(Call{Tool: "bash", Args: args}); got.Decision != tc.want {
			t.Errorf("%s: %+v, want %v", tc.command, got, tc.want)
		}
	}
}

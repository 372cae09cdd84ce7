package permission

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
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

// The patch layer the plugin guide ships with its custom binary
// (examples/wordcount/cmd/wordcount-harness/wordcount.patch.yml), over the
// default harness.yml, lets `harness tool word_count …` run headless (no
// ask), and keeps the standard read-only tools read-only (`!append`).
func TestPluginGuideWordCountPatchRunsTheTool(t *testing.T) {
	const name = "wordcount.patch.yml"
	patch, err := os.ReadFile(filepath.Join("..", "..", "examples", "wordcount", "cmd", "wordcount-harness", name))
	if err != nil {
		t.Fatal(err)
	}
	pol := policyOf(t, name, patch)
	args, _ := json.Marshal(map[string]any{"text": "a bb ccc", "min": 2})
	for _, tool := range []string{"word_count", "file_word_count"} {
		if v := pol.Evaluate(Call{Tool: tool, Args: args}); v.Decision != Allow {
			t.Fatalf("%s: %+v", tool, v)
		}
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

// TestDenialHintPatchAllowsTheCall: for compound commands and redirections,
// the headless denial names rules that allow the call, as a patch that keeps
// the default allow list; composing that very patch over the repository's
// harness.yml makes the same call pass, and the default rules still hold.
func TestDenialHintPatchAllowsTheCall(t *testing.T) {
	base := policyOf(t, "none.yml", []byte("[]\n"))
	patchLine := regexp.MustCompile(`(?m)^- \{id: permission, config: \{allow: \[.*\]\}\}$`)
	for _, command := range []string{
		"echo hello > out.txt",
		"make build && ./run.sh --fast",
		"sort < in.txt | uniq -c > counts.txt",
		"go test ./... 2>&1 | tee test.log",
		`echo "$(< notes.txt)"`,
		"cd sub && npm ci",
	} {
		call := Call{Tool: "bash", Args: bashArgs(command)}
		v := base.Evaluate(call)
		if v.Decision != Ask || len(v.Suggestions) == 0 {
			t.Errorf("%q: %+v, want an ask with suggestions", command, v)
			continue
		}
		hint := (&plugin{policy: base}).denialFor(v, "bash", "this session is headless")
		line := patchLine.FindString(hint)
		if line == "" || !strings.Contains(hint, "harness config > harness.yml") || !strings.HasSuffix(hint, `The tool "bash" was not run.`) {
			t.Errorf("%q: hint without a patch, the harness config advice or its end: %q", command, hint)
			continue
		}
		patched := policyOf(t, "hint.yml", []byte(line+"\n"))
		if got := patched.Evaluate(call); got.Decision != Allow {
			t.Errorf("%q: with the hinted patch %s: %+v", command, line, got)
		}
		for _, still := range []struct {
			command string
			want    Decision
		}{{"git status", Allow}, {"rm -rf /tmp/x", Deny}} {
			if got := patched.Evaluate(Call{Tool: "bash", Args: bashArgs(still.command)}); got.Decision != still.want {
				t.Errorf("%q: the hinted patch changed %q: %+v", command, still.command, got)
			}
		}
	}
}

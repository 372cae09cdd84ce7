package permission_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/loader"
	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/internal/policytest"
	"github.com/dshgo/harness/plugins/std"
	toolbash "github.com/dshgo/harness/plugins/tool-bash"
	"github.com/dshgo/harness/services/tools"
)

// TestDefaultManifestPolicy boots the policy rows of the repository's
// harness.yml (plus tool-bash, headless) and checks its safe default policy.
func TestDefaultManifestPolicy(t *testing.T) {
	m, err := manifest.ReadFile(filepath.Join("..", "..", "harness.yml"))
	if err != nil {
		t.Fatal(err)
	}
	// The bash tool and the policy work in a fresh workspace; outside is a
	// directory the sandbox must keep the commands out of.
	work, outside := t.TempDir(), t.TempDir()
	patch, err := manifest.ParsePatch("test.yml", []byte("- {id: approval, config: {answerer: headless}}\n"+
		"- {id: bash, config: {cwd: "+policytest.Quote(work)+"}}\n- {id: fs, config: {cwd: "+policytest.Quote(work)+"}}\n- {id: permission, config: {cwd: "+policytest.Quote(work)+"}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m, err = manifest.Compose(m, patch); err != nil {
		t.Fatal(err)
	}
	// Only the rows the policy depends on: the others (model providers, …)
	// may need keys or services this test does not have.
	keep := map[string]bool{"subprocess-local": true, "tools": true, "tool-bash": true, "approval": true, "permission": true, "hooks": true, "tool-fs": true}
	var rows []manifest.Entry
	hasBash := false
	for _, e := range m.Plugins {
		if keep[e.Name] && !e.Disabled {
			rows = append(rows, e)
			hasBash = hasBash || e.Name == "tool-bash"
		}
	}
	if !hasBash {
		rows = append(rows, manifest.Entry{ID: "bash-test", Name: "tool-bash"})
	}
	m.Plugins = rows
	plugins := std.Plugins()
	if !containsPlugin(plugins, toolbash.Plugin.Name()) {
		plugins = append(plugins, toolbash.Plugin)
	}
	cat, err := core.NewCatalog(plugins...)
	if err != nil {
		t.Fatal(err)
	}
	root := core.NewRoot(core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(func() { _ = root.Dispose(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l := loader.New(root, cat, func(string) (string, bool) { return "", false })
	if err := l.Apply(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := l.Audit(); err != nil {
		t.Fatal(err)
	}
	var reg *tools.Registry
	probe := core.Define("probe", func(c *core.Context, _ struct{}) error {
		reg = core.Use(c, tools.Key)
		return nil
	}, core.WithInject(tools.Key.Name()))
	if err := root.Context().Plugin(probe, nil).Await(ctx); err != nil {
		t.Fatal(err)
	}
	// The default harness.yml runs bash in a workspace-write sandbox with
	// autoAllowSandboxed: a headless session edits, builds and tests in the
	// workspace without asking; deny rules still refuse; what only the
	// sandbox can stop (network, writes outside the workspace) fails inside it.
	tests := []struct{ command, want string }{
		{"echo hi", "hi\n"},
		{"pwd >/dev/null && echo ok", "ok\n"},
		{"git status --short >/dev/null 2>&1; echo done", "done\n"},
		{"rm -rf /nonexistent-default-policy", `Error: permission denied: rule "bash(rm -rf *)" in the deny list matches this call`},
		{"rm -fr /nonexistent-default-policy", `Error: permission denied: rule "bash(rm -rf *)" in the deny list matches this call`},
		{"sudo true", `Error: permission denied: rule "bash(sudo *)" in the deny list matches this call`},
		{"env sudo true", `Error: permission denied: rule "bash(sudo *)" in the deny list matches this call`},
		{"echo x && cat ~/.ssh/id_rsa", `Error: permission denied: rule "bash(*.ssh/*)" in the deny list matches this call`},
		{"git push -f origin main", `Error: permission denied: rule "bash(git push --force *)" in the deny list matches this call`},
		{"echo hi > notes.txt && cat notes.txt", "hi\n"},
		{"curl -s https://example.com >/dev/null; echo curl exit $?", "curl exit "},
		{"echo x > " + outside + "/escaped; echo write exit $?", "write exit "},
	}
	for _, tt := range tests {
		args := `{"command":` + policytest.Quote(tt.command) + `,"description":"default policy"}`
		got := policytest.Text(reg.Execute(ctx, tools.Call{ID: "c", Name: "bash", Arguments: args}))
		if !strings.HasPrefix(got, tt.want) {
			t.Errorf("%q:\n got %q\nwant %q…", tt.command, got, tt.want)
		}
		if strings.HasPrefix(got, "curl exit 0") || strings.HasPrefix(got, "write exit 0") {
			t.Errorf("%q: the sandbox let it through: %q", tt.command, got)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "escaped")); !os.IsNotExist(err) {
		t.Errorf("a write outside the workspace escaped the sandbox: %v", err)
	}
	// File edits (acceptEdits): the write tool creates a file in the
	// workspace without asking; outside it (absolute path, ../) it asks,
	// which headless is a denial, and nothing is written.
	for _, tt := range []struct{ path, want string }{
		{"made.txt", ""},
		{filepath.Join(outside, "made.txt"), `Error: tool "write" requires approval`},
		{"../" + filepath.Base(outside) + "/made2.txt", `Error: tool "write" requires approval`},
	} {
		args := `{"file_path":` + policytest.Quote(tt.path) + `,"content":"x\n"}`
		got := policytest.Text(reg.Execute(ctx, tools.Call{ID: "c", Name: "write", Arguments: args}))
		if tt.want == "" && strings.HasPrefix(got, "Error") || tt.want != "" && !strings.HasPrefix(got, tt.want) {
			t.Errorf("write %s: %q", tt.path, got)
		}
	}
	if b, err := os.ReadFile(filepath.Join(work, "made.txt")); err != nil || string(b) != "x\n" {
		t.Errorf("write in the workspace: %q %v", b, err)
	}
	for _, name := range []string{"made.txt", "made2.txt"} {
		if _, err := os.Stat(filepath.Join(outside, name)); !os.IsNotExist(err) {
			t.Errorf("write outside the workspace: %s exists (%v)", name, err)
		}
	}
	// Escalation: asked, headless denied.
	args := `{"command":"echo x > ` + outside + `/escalated","description":"d","sandbox":"off","justification":"needs it"}`
	if got := policytest.Text(reg.Execute(ctx, tools.Call{ID: "c", Name: "bash", Arguments: args})); !strings.Contains(got, "asks to run outside the sandbox") {
		t.Errorf("escalation: %q", got)
	}
}

func containsPlugin(ps []core.Plugin, name string) bool {
	for _, p := range ps {
		if p.Name() == name {
			return true
		}
	}
	return false
}

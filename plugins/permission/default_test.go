package permission_test

import (
	"context"
	"io"
	"log/slog"
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
	patch, err := manifest.ParsePatch("test.yml", []byte("- {id: approval, config: {answerer: headless}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m, err = manifest.Compose(m, patch); err != nil {
		t.Fatal(err)
	}
	// Only the rows the policy depends on: the others (model providers, …)
	// may need keys or services this test does not have.
	keep := map[string]bool{"subprocess-local": true, "tools": true, "tool-bash": true, "approval": true, "permission": true, "hooks": true}
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
	tests := []struct{ command, want string }{
		{"echo hi", "hi\n"},
		{"pwd >/dev/null && echo ok", "ok\n"},
		{"git status --short >/dev/null 2>&1; echo done", "done\n"},
		{"rm -rf /nonexistent-default-policy", `Error: permission denied: rule "bash(rm -rf *)" in the deny list matches this call`},
		{"sudo true", `Error: permission denied: rule "bash(sudo *)" in the deny list matches this call`},
		{"echo x && cat ~/.ssh/id_rsa", `Error: permission denied: rule "bash(*.ssh/*)" in the deny list matches this call`},
		{"curl -s https://example.com", `Error: tool "bash" requires approval: no allow rule covers this call (permission mode default), but this session is headless`},
		{"echo hi > notes.txt", `Error: tool "bash" requires approval`},
	}
	for _, tt := range tests {
		args := `{"command":` + policytest.Quote(tt.command) + `,"description":"default policy"}`
		got := policytest.Text(reg.Execute(ctx, tools.Call{ID: "c", Name: "bash", Arguments: args}))
		if !strings.HasPrefix(got, tt.want) {
			t.Errorf("%q:\n got %q\nwant %q…", tt.command, got, tt.want)
		}
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

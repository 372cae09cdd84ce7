package toolsearch

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/tools"
)

// With the runtime's default sandbox on, ripgrep runs read-only under its
// denyRead: a denied file never matches, the rest of the tree does.
func TestRipgrepRunsInReadOnlySandbox(t *testing.T) {
	if _, err := exec.LookPath("rg"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("rg missing in CI (.ci/run installs ripgrep)")
		}
		t.Skip("rg not installed")
	}
	dir := t.TempDir()
	for name, body := range map[string]string{"secrets.txt": "API=TOP_SECRET_VALUE\n", "notes.txt": "TOP_SECRET_VALUE is a marker\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var sp subprocess.Options
	sp.SetDefaults()
	sp.Sandbox = subprocess.SandboxPolicy{Mode: subprocess.SandboxWorkspaceWrite, DenyRead: []string{"**/secrets.txt"}}
	root := core.NewRoot()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		root.Dispose(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg := configFor(dir, "ripgrep")
	for _, r := range []struct {
		p   core.Plugin
		cfg any
	}{{tools.Plugin, nil}, {subprocess.Plugin, &sp}, {Plugin, &cfg}} {
		if err := root.Context().Plugin(r.p, r.cfg).Await(ctx); err != nil {
			t.Fatal(err)
		}
	}
	rt, _ := core.Lookup(root.Context(), subprocess.Key)
	if _, rep := rt.Sandbox(); rep.Enforcement == subprocess.EnforcementNone {
		if os.Getenv("CI") != "" {
			t.Fatalf("no sandbox backend in CI: %v", rep)
		}
		t.Skipf("no sandbox backend: %v", rep)
	}
	reg, _ := core.Lookup(root.Context(), tools.Key)
	o := reg.Execute(ctx, tools.Call{ID: "1", Name: "grep", Arguments: `{"pattern":"TOP_SECRET_VALUE","include":"*"}`})
	text := tools.TextOf(o.Content)
	if o.IsError || !strings.Contains(text, "notes.txt") || strings.Contains(text, "secrets.txt") || strings.Contains(text, "API=") {
		t.Fatalf("grep in the sandbox: %s", text)
	}
}

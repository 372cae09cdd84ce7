package hooks_test

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
	"github.com/dshgo/harness/plugins/approval"
	"github.com/dshgo/harness/plugins/hooks"
	"github.com/dshgo/harness/plugins/permission"
	toolbash "github.com/dshgo/harness/plugins/tool-bash"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/tools"
)

// TestExampleManifest boots examples/hooks/harness.yml (made headless by a
// patch) through the manifest loader with the real tool-bash, and checks what
// docs/policy.md says about it.
func TestExampleManifest(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(repo)
	audit := filepath.Join(t.TempDir(), "audit.log")
	t.Setenv("AUDIT_LOG", audit)
	m, err := manifest.ReadFile("examples/hooks/harness.yml")
	if err != nil {
		t.Fatal(err)
	}
	patch, err := manifest.ParsePatch("headless.yml", []byte("- {id: approval, config: {answerer: headless}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m, err = manifest.Compose(m, patch); err != nil {
		t.Fatal(err)
	}
	cat, err := core.NewCatalog(subprocess.Plugin, tools.Plugin, toolbash.Plugin, approval.Plugin, permission.Plugin, hooks.Plugin)
	if err != nil {
		t.Fatal(err)
	}
	root := core.NewRoot(core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(func() { _ = root.Dispose(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l := loader.New(root, cat, os.LookupEnv)
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
	bash := func(command string) string {
		args := `{"command":` + policytest.Quote(command) + `,"description":"example"}`
		return policytest.Text(reg.Execute(ctx, tools.Call{ID: "c", Name: "bash", Arguments: args}))
	}
	tests := []struct{ command, want string }{
		{"echo ok", "ok\n"},
		{"echo sk-live-1234", "[REDACTED]\n"},
		{"git push origin main", "Error: pushing publishes commits; approval is required, but this session is headless"},
		{"ls", `Error: tool "bash" requires approval: no allow rule covers this call (permission mode default), but this session is headless`},
	}
	for _, tt := range tests {
		if got := bash(tt.command); !strings.HasPrefix(got, tt.want) {
			t.Errorf("%q:\n got %q\nwant %q…", tt.command, got, tt.want)
		}
	}
	// Both the deny rule and the deny-rm-rf hook refuse; either reason may be the one shown.
	if got := bash("rm -rf /nonexistent-b17"); !strings.HasPrefix(got, "Error: ") || !strings.Contains(got, "rm -rf") {
		t.Errorf("rm -rf: %q", got)
	}
	log, _ := os.ReadFile(audit)
	if n := strings.Count(string(log), "PreToolUse Bash\n"); n != len(tests)+1 {
		t.Errorf("audit hook ran %d times for %d calls: %q", n, len(tests)+1, log)
	}
}

package hooks

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dshgo/harness/services/subprocess"
)

// Hooks run unsandboxed by default; with `sandbox: true` they run under the
// runtime's default policy (here workspace-write: the hook's directory only).
func TestHookSandboxIsOptIn(t *testing.T) {
	t.Parallel()
	rt, err := subprocess.New(subprocess.Options{Sandbox: subprocess.SandboxPolicy{Mode: subprocess.SandboxWorkspaceWrite}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	if _, rep := rt.Sandbox(); rep.Enforcement == subprocess.EnforcementNone {
		if os.Getenv("CI") != "" {
			t.Fatalf("no sandbox backend in CI: %v", rep)
		}
		t.Skipf("no sandbox backend: %v", rep)
	}
	dir, outside := t.TempDir(), t.TempDir()
	for _, tc := range []struct {
		sandboxed bool
		name      string
	}{{false, "plain.txt"}, {true, "sandboxed.txt"}} {
		victim := filepath.Join(outside, tc.name)
		r := subprocessRunnerWith(rt, tc.sandboxed)(context.Background(), "echo x > "+victim+"; echo {}", nil, dir, nil, 10*time.Second)
		if r.err != nil {
			t.Fatal(r.err)
		}
		_, err := os.Stat(victim)
		if wrote := err == nil; wrote == tc.sandboxed {
			t.Fatalf("sandboxed=%v: hook wrote outside its directory = %v (stat %v, stderr %s)", tc.sandboxed, wrote, err, r.stderr)
		}
		if tc.sandboxed && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
}

package hooks

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/dshgo/harness/internal/sandboxtest"
	"github.com/dshgo/harness/services/subprocess"
)

// TestAnUnsandboxedHookRunsNoSandboxProbe: with the runtime's default
// policy on, a hook without `sandbox: true` runs without the sandbox
// probe (no bwrap run); the probe, asked for afterwards, runs bwrap. A
// bwrap first on PATH logs each run, then execs the real one.
func TestAnUnsandboxedHookRunsNoSandboxProbe(t *testing.T) {
	bin, runs := sandboxtest.LoggingBwrap(t)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	rt, err := subprocess.New(subprocess.Options{Sandbox: subprocess.SandboxPolicy{Mode: subprocess.SandboxWorkspaceWrite}, SandboxBackend: "bwrap"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	r := subprocessRunnerWith(rt, false)(context.Background(), "echo {}", nil, t.TempDir(), nil, 10*time.Second)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if n := runs(); n != 0 {
		t.Fatalf("an unsandboxed hook ran bwrap %d times, want none", n)
	}
	if err := rt.ProbeSandbox(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b, errs := rt.SandboxBackend(); b != "bwrap" || runs() != 1 {
		t.Fatalf("probe: backend %q (%v), %d bwrap runs logged; want bwrap and 1", b, errs, runs())
	}
}

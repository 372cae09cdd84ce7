package subprocess

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/services/subprocess/sandbox"
)

// sandboxRuntime returns a runtime whose sandbox backend is forced to
// backend. A backend that does not work here fails the test in CI and
// skips it elsewhere.
func sandboxRuntime(t *testing.T, backend string, opts Options) *Runtime {
	t.Helper()
	if _, errs := sandbox.Probe(backend); errs != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("sandbox backend %s unavailable in CI (.ci/run installs bubblewrap): %v", backend, errs)
		}
		t.Skipf("sandbox backend %s unavailable here: %v", backend, errs)
	}
	opts.SandboxBackend = backend
	return newRuntime(t, opts)
}

var sandboxBackends = []string{sandbox.BackendBwrap}

// runIn runs script under policy p in dir and returns exit code, stdout
// and stderr.
func runIn(t *testing.T, rt *Runtime, p *SandboxPolicy, dir, script string) (int, string, string, SandboxReport) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := rt.Run(Spec{Context: ctx, Argv: []string{"bash", "-c", script}, Dir: dir, Sandbox: p,
		Stdin: IgnoreStdin(), Stdout: Collect(1 << 16), Stderr: Collect(1 << 16), Grace: time.Second})
	if err != nil {
		t.Fatalf("Run %q: %v", script, err)
	}
	return exitCode(t, res.Outcome), res.Stdout.ReadFrom(0).Text, res.Stderr.ReadFrom(0).Text, res.Sandbox
}

func TestSandboxWriteOutsideWorkspaceFails(t *testing.T) {
	for _, backend := range sandboxBackends {
		t.Run(backend, func(t *testing.T) {
			rt := sandboxRuntime(t, backend, Options{})
			ws, outside := t.TempDir(), t.TempDir()
			p := &SandboxPolicy{Mode: SandboxWorkspaceWrite}
			code, _, stderr, rep := runIn(t, rt, p, ws, "echo in > inside.txt && echo out > "+outside+"/victim.txt")
			if code == 0 {
				t.Fatalf("write outside the workspace succeeded (report %v)", rep)
			}
			if rep.Backend != backend || rep.Enforcement == EnforcementNone {
				t.Fatalf("report %v: want backend %s enforcing", rep, backend)
			}
			if b, err := os.ReadFile(filepath.Join(ws, "inside.txt")); err != nil || string(b) != "in\n" {
				t.Fatalf("write inside the workspace: %q, %v", b, err)
			}
			if _, err := os.Stat(filepath.Join(outside, "victim.txt")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("victim outside the workspace exists (err %v); stderr %s", err, stderr)
			}
			// read-only: not even the workspace is writable.
			code, _, _, _ = runIn(t, rt, &SandboxPolicy{Mode: SandboxReadOnly}, ws, "echo x > ro.txt")
			if _, err := os.Stat(filepath.Join(ws, "ro.txt")); code == 0 || !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("read-only mode wrote the workspace (exit %d, stat %v)", code, err)
			}
			if !strings.Contains(stderr, "Read-only") && !strings.Contains(stderr, "ermission denied") {
				t.Logf("stderr: %s", stderr)
			}
		})
	}
}

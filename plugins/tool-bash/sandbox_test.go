package toolbash

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/services/subprocess"
)

// sandboxedExecutor is newExecutor over a runtime whose default policy is
// workspace-write without network. Without a working backend the test
// fails in CI and skips elsewhere.
func sandboxedExecutor(t *testing.T) *Executor {
	t.Helper()
	rt, err := subprocess.New(subprocess.Options{Sandbox: subprocess.SandboxPolicy{Mode: subprocess.SandboxWorkspaceWrite}},
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rt.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	if _, rep := rt.Sandbox(); rep.Enforcement == subprocess.EnforcementNone {
		if os.Getenv("CI") != "" {
			t.Fatalf("no sandbox backend in CI: %v", rep)
		}
		t.Skipf("no sandbox backend here: %v", rep)
	}
	x := newExecutor(t)
	x.Runtime = rt
	return x
}

// The bash tool runs every call in the runtime's default sandbox; a call
// with sandbox "off" and a justification runs unsandboxed (the permission
// plugin asks for it before the body runs).
func TestBashRunsSandboxedUnlessEscalated(t *testing.T) {
	t.Parallel()
	x := sandboxedExecutor(t)
	// A directory inside the workspace is writable; one outside it is not
	// (under the private /tmp of bwrap it does not even exist).
	victimDir, err := os.MkdirTemp(x.Cwd, "")
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	ctx := context.Background()

	v, err := x.Run(ctx, Args{Command: "echo in > " + filepath.Join(victimDir, "ok.txt") + " && echo out > " + filepath.Join(outside, "victim.txt"), Description: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if v.Sandbox == nil || v.Sandbox.Enforcement == subprocess.EnforcementNone {
		t.Fatalf("call ran unsandboxed: %+v", v.Sandbox)
	}
	if _, err := os.Stat(filepath.Join(victimDir, "ok.txt")); err != nil {
		t.Fatalf("write inside the workspace failed: %v (%s)", err, Render(v))
	}
	if _, err := os.Stat(filepath.Join(outside, "victim.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("sandboxed call wrote outside the workspace: %v", err)
	}

	off, why := "off", "needs to write the shared output directory"
	v, err = x.Run(ctx, Args{Command: "echo out > " + filepath.Join(outside, "victim.txt"), Description: "t", Sandbox: &off, Justification: &why})
	if err != nil {
		t.Fatal(err)
	}
	if v.Sandbox == nil || v.Sandbox.Backend != "none" {
		t.Fatalf("escalated call report %+v", v.Sandbox)
	}
	if b, err := os.ReadFile(filepath.Join(outside, "victim.txt")); err != nil || string(b) != "out\n" {
		t.Fatalf("escalated call did not run unsandboxed: %q %v (%s)", b, err, Render(v))
	}

	// sandbox "off" without a justification, or any other value, is refused.
	if _, err := x.Run(ctx, Args{Command: "true", Description: "t", Sandbox: &off}); err == nil || !strings.Contains(err.Error(), "justification") {
		t.Fatalf("sandbox off without justification: %v", err)
	}
	on := "on"
	if _, err := x.Run(ctx, Args{Command: "true", Description: "t", Sandbox: &on, Justification: &why}); err == nil || !strings.Contains(err.Error(), "sandbox") {
		t.Fatalf("sandbox %q: %v", on, err)
	}
}

// A sandboxed call that plants the project patch gets it undone, and its
// result says so (the model and the user see the marker); the same file
// written by an approved unsandboxed call stays.
func TestBashReportsUndoneProtectedPath(t *testing.T) {
	t.Parallel()
	x := sandboxedExecutor(t)
	ctx := context.Background()
	patch := filepath.Join(x.Cwd, "harness.patch.yml")
	v, err := x.Run(ctx, Args{Command: "printf -- '- id: permission\\n  config: {mode: bypass}\\n' > harness.patch.yml", Description: "t"})
	if err != nil {
		t.Fatal(err)
	}
	out := Render(v)
	if len(v.Protected) != 1 || !strings.Contains(out, "[sandbox: protected path "+patch+" was created by the command; the change was undone and kept as "+patch+".rejected-") {
		t.Fatalf("result %q (protected %q): want the undo notice", out, v.Protected)
	}
	if _, err := os.Stat(patch); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("harness.patch.yml exists after the sandboxed call: %v", err)
	}

	off, why := "off", "the user asked for a project patch"
	v, err = x.Run(ctx, Args{Command: "echo '- id: bash' > harness.patch.yml", Description: "t", Sandbox: &off, Justification: &why})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Protected) != 0 {
		t.Fatalf("unsandboxed call: protected %q", v.Protected)
	}
	if b, err := os.ReadFile(patch); err != nil || string(b) != "- id: bash\n" {
		t.Fatalf("harness.patch.yml after the unsandboxed call: %q, %v", b, err)
	}
}

// A sandboxed call whose request the network proxy refuses gets the
// refusal in its result, naming the host and the rule to add (curl itself
// shows only "CONNECT tunnel failed, response 403").
func TestBashReportsNetworkRefusal(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("curl not installed")
		}
		t.Skip("curl not installed")
	}
	x := sandboxedExecutor(t)
	rt, err := subprocess.New(subprocess.Options{Sandbox: subprocess.SandboxPolicy{Mode: subprocess.SandboxWorkspaceWrite,
		Network: subprocess.SandboxNetwork{Mode: subprocess.SandboxNetworkProxy, PackageRegistries: true}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	x.Runtime = rt
	v, err := x.Run(context.Background(), Args{Command: "curl -sS -m 10 https://example.com/", Description: "t"})
	if err != nil {
		t.Fatal(err)
	}
	out := Render(v)
	if !strings.Contains(out, `[harness sandbox: network access to example.com is not allowed: add "example.com" to sandbox.network.allowedDomains`) || !strings.Contains(out, "403") {
		t.Fatalf("result %q: want curl's 403 and the refusal naming example.com", out)
	}
}

//go:build unix

package subprocess

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/internal/sandboxtest"
)

// TestSandboxHostExecutedFiles performs each host-executed-file attack of
// issue 32 (git's indirection: config, commondir, a .git directory
// swapped for a .git file, config.worktree, hooks, info/attributes, a
// submodule's config, a linked worktree's commondir, an included config
// file, a .git created where none was; direnv, VS Code and mise files) in
// the real sandbox of every backend, then runs what the user runs next
// outside it (real git, with the planted fsmonitor, hook or filter
// touching a marker) and fails if anything ran, if the protected path
// changed, or if nothing in the result (the command's error, the guard's
// notice) says the attack was refused. Without a sandbox (the
// control, mode off) every git attack does run: the test can fail.
func TestSandboxHostExecutedFiles(t *testing.T) {
	for _, backend := range append([]string{"off"}, sandboxBackends...) {
		t.Run(backend, func(t *testing.T) {
			var rt *Runtime
			p := &SandboxPolicy{Mode: SandboxWorkspaceWrite}
			if backend == "off" {
				rt = newRuntime(t, Options{})
				p = &SandboxPolicy{Mode: SandboxOff}
			} else {
				rt = sandboxRuntime(t, backend, Options{})
			}
			for _, a := range sandboxtest.HostExecAttacks() {
				t.Run(a.Name, func(t *testing.T) {
					e := sandboxtest.NewHostEnv(t, a)
					protected := filepath.Join(e.WS, a.Protected)
					before, beforeErr := os.ReadFile(protected)
					res := runScript(t, rt, p, e.WS, a.AttackScript(e))
					stderr := res.Stderr.ReadFrom(0).Text
					if a.Host != nil {
						a.Host(t, e)
					}
					ran := e.Ran()
					if backend == "off" {
						if a.Host != nil && !ran {
							t.Fatalf("control: the attack did not run without a sandbox (stderr %q)", stderr)
						}
						return
					}
					if ran {
						t.Fatalf("the planted command ran on the host (stderr %q, protected changes %q)", stderr, changed(res))
					}
					// The refusal reaches the result: the write failed in
					// the command (a read-only bind, a pinned git directory)
					// or the guard reports what it undid.
					if len(res.Protected) == 0 && !strings.Contains(stderr, "Read-only file system") && !strings.Contains(stderr, "Device or resource busy") {
						t.Fatalf("nothing in the result says the attack was refused: stderr %q, no protected change", stderr)
					}
					after, afterErr := os.ReadFile(protected)
					if string(after) != string(before) || (beforeErr == nil) != (afterErr == nil) {
						t.Fatalf("%s changed: %q (%v), was %q (%v); stderr %q, changes %q", a.Protected, after, afterErr, before, beforeErr, stderr, changed(res))
					}
				})
			}
		})
	}
}

//go:build unix

package subprocess

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/services/subprocess/sandbox"
)

// A denied directory that holds a Visible path hides everything in it but
// that path (a fleet's work root: the other jobs' work dirs and patch
// files; under bwrap even their names), in both modes and on every
// backend, including a sibling created after a shared sandbox started;
// the visible working directory stays readable (and writable in
// workspace-write mode). A command pointed at a hidden sibling is refused.
func TestSandboxDeniedDirectoryHoldingTheWorkspace(t *testing.T) {
	for _, backend := range sandboxBackends {
		t.Run(backend, func(t *testing.T) {
			rt := sandboxRuntime(t, backend, Options{})
			// Outside /tmp: bwrap's /tmp is private, a root there would be
			// invisible anyway.
			root, err := os.MkdirTemp(".", ".sandbox-holder-")
			must(t, err)
			t.Cleanup(func() { _ = os.RemoveAll(root) })
			root, _ = filepath.Abs(root)
			ws := filepath.Join(root, "job-a")
			must(t, os.MkdirAll(ws, 0o700))
			must(t, os.WriteFile(filepath.Join(ws, "own.txt"), []byte("OWN_CONTENT\n"), 0o600))
			must(t, os.MkdirAll(filepath.Join(root, "job-b"), 0o700))
			must(t, os.WriteFile(filepath.Join(root, "job-b", "secret.txt"), []byte("TOP_SECRET_B\n"), 0o600))
			must(t, os.WriteFile(filepath.Join(root, ".patch-job-b.yml"), []byte("apiKey: TOP_SECRET_PATCH\n"), 0o600))
			probe := "cat own.txt; ls -A " + root + "; cat " + root + "/*/secret.txt " + root + "/.patch-* ../job-b/secret.txt; true"
			for i, mode := range []SandboxMode{SandboxWorkspaceWrite, SandboxReadOnly, SandboxWorkspaceWrite} {
				if i == 2 {
					// A job started after the sandbox (a shared one is reused).
					must(t, os.MkdirAll(filepath.Join(root, "job-c"), 0o700))
					must(t, os.WriteFile(filepath.Join(root, "job-c", "secret.txt"), []byte("TOP_SECRET_C\n"), 0o600))
				}
				p := &SandboxPolicy{Mode: mode, DenyRead: []string{root}, Visible: []string{ws}}
				code, stdout, stderr, rep := runIn(t, rt, p, ws, probe)
				if strings.Contains(stdout+stderr, "TOP_SECRET") {
					t.Fatalf("%s: a sibling of the workspace leaked (report %v):\n%s\n%s", mode, rep, stdout, stderr)
				}
				if code != 0 || !strings.Contains(stdout, "OWN_CONTENT") {
					t.Fatalf("%s: the workspace is unreadable: exit %d, %q, %q (report %v)", mode, code, stdout, stderr, rep)
				}
				// (Landlock lists denied directories: names show, contents not.)
				for _, sib := range []string{"job-b", "job-c", ".patch-job-b.yml"} {
					if strings.HasPrefix(backend, sandbox.BackendBwrap) && strings.Contains(stdout, sib) {
						t.Fatalf("%s: listing the denied root shows %s: %q", mode, sib, stdout)
					}
				}
				if mode == SandboxWorkspaceWrite {
					code, _, stderr, _ = runIn(t, rt, p, ws, "echo new > new.txt && cat new.txt")
					if b, _ := os.ReadFile(filepath.Join(ws, "new.txt")); code != 0 || string(b) != "new\n" {
						t.Fatalf("the workspace is not writable: exit %d, %q, %s", code, b, stderr)
					}
					code, _, _, _ = runIn(t, rt, p, ws, "echo x > "+root+"/dropped.txt")
					if _, err := os.Stat(filepath.Join(root, "dropped.txt")); code == 0 || err == nil {
						t.Fatalf("wrote into the denied root (exit %d)", code)
					}
				}
				if strings.HasPrefix(backend, sandbox.BackendBwrap) && i == 0 {
					// bwrap: the root shows the workspace alone.
					_, stdout, _, _ := runIn(t, rt, p, ws, "ls -A "+root)
					if strings.TrimSpace(stdout) != "job-a" {
						t.Fatalf("bwrap: the denied root lists %q, want job-a alone", stdout)
					}
				}
			}
			// A command whose working directory is another job's: refused.
			p := &SandboxPolicy{Mode: SandboxWorkspaceWrite, DenyRead: []string{root}, Visible: []string{ws}}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err = rt.Run(Spec{Context: ctx, Argv: []string{"cat", "secret.txt"}, Dir: filepath.Join(root, "job-b"), Sandbox: p,
				Stdin: IgnoreStdin(), Stdout: Collect(1 << 16), Stderr: Collect(1 << 16), Grace: time.Second})
			if err == nil || !strings.Contains(err.Error(), "not visible inside the sandbox") {
				t.Fatalf("a working directory in a hidden sibling: err %v, want a refusal", err)
			}
		})
	}
}

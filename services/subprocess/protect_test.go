//go:build unix

package subprocess

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/subprocess/sandbox"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, []byte(content), 0o644))
}

func wantContent(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != want {
		t.Fatalf("%s: %q, %v; want %q", path, b, err, want)
	}
}

// rejected returns the .rejected-TS copies beside path.
func rejected(t *testing.T, path string) []string {
	t.Helper()
	m, err := filepath.Glob(path + ".rejected-*")
	must(t, err)
	return m
}

// changed returns the paths of the protected changes of res.
func changed(res Result) []string {
	var out []string
	for _, c := range res.Protected {
		if c.Err != nil {
			out = append(out, c.Path+" (error: "+c.Err.Error()+")")
			continue
		}
		out = append(out, c.Path)
	}
	slices.Sort(out)
	return out
}

// The sandbox must not let a command change what the harness, Claude Code
// settings or git run later outside it: existing files are read-only under
// bwrap (EROFS) and put back under Landlock; created ones are removed, the
// command's version kept as .rejected-TS; other files stay writable.
func TestSandboxProtectedPathsExisting(t *testing.T) {
	for _, backend := range sandboxBackends {
		t.Run(backend, func(t *testing.T) {
			rt := sandboxRuntime(t, backend, Options{})
			ws, _ := filepath.EvalSymlinks(t.TempDir())
			files := map[string]string{
				"harness.patch.yml":            "- id: bash\n  config: {timeout: 2m}\n",
				".claude/settings.json":        "{}\n",
				".git/config":                  "[core]\n\tbare = false\n",
				".git/hooks/pre-commit.sample": "#!/bin/sh\n",
			}
			for rel, c := range files {
				writeFile(t, filepath.Join(ws, rel), c)
			}
			p := &SandboxPolicy{Mode: SandboxWorkspaceWrite}
			res := runScript(t, rt, p, ws, `
echo ok > normal.txt
printf -- '- id: subprocess\n  config:\n    sandbox: {mode: "off"}\n' > harness.patch.yml
echo '{"hooks":{}}' > .claude/settings.json
printf '[core]\n\tfsmonitor = /tmp/x\n' >> .git/config
printf 'evil' > cfg.tmp && mv -f cfg.tmp .git/config
echo '#!/bin/sh' > .git/hooks/pre-commit
true`)
			stderr := res.Stderr.ReadFrom(0).Text
			wantContent(t, filepath.Join(ws, "normal.txt"), "ok\n")
			for rel, c := range files {
				wantContent(t, filepath.Join(ws, rel), c)
			}
			if _, err := os.Lstat(filepath.Join(ws, ".git/hooks/pre-commit")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf(".git/hooks/pre-commit exists after the command (%v)", err)
			}
			switch backend {
			case sandbox.BackendLandlock:
				// The writes went through; the guard put every file back and
				// kept the command's version.
				want := []string{filepath.Join(ws, ".claude/settings.json"), filepath.Join(ws, ".git/config"),
					filepath.Join(ws, ".git/hooks/pre-commit"), filepath.Join(ws, "harness.patch.yml")}
				if got := changed(res); !slices.Equal(got, want) {
					t.Fatalf("protected changes %q, want %q", got, want)
				}
				if r := rejected(t, filepath.Join(ws, "harness.patch.yml")); len(r) != 1 {
					t.Fatalf("rejected copies of harness.patch.yml: %q", r)
				} else {
					wantContent(t, r[0], "- id: subprocess\n  config:\n    sandbox: {mode: \"off\"}\n")
				}
				if r := rejected(t, filepath.Join(ws, ".git/config")); len(r) != 1 {
					t.Fatalf("rejected copies of .git/config: %q", r)
				} else {
					wantContent(t, r[0], "evil")
				}
				for _, c := range res.Protected {
					if s := c.String(); !strings.Contains(s, "sandbox: protected path "+c.Path) || !strings.Contains(s, "undone") {
						t.Fatalf("notice %q", s)
					}
				}
			default:
				// Bound read-only: every write failed, nothing to undo.
				if !strings.Contains(stderr, "Read-only file system") {
					t.Fatalf("stderr %q: want EROFS", stderr)
				}
				if len(res.Protected) != 0 {
					t.Fatalf("protected changes %q, want none (read-only binds)", changed(res))
				}
				if r := rejected(t, filepath.Join(ws, "harness.patch.yml")); len(r) != 0 {
					t.Fatalf("rejected copies %q", r)
				}
			}
			// The git directory is pinned: bwrap refuses to rename it (a
			// mount point, EBUSY); under Landlock the guard moves what
			// took its place aside and renames the original back.
			res2 := runScript(t, rt, p, ws, `mv .git .git-moved && mkdir .git && printf evil > .git/config`)
			wantContent(t, filepath.Join(ws, ".git/config"), files[".git/config"])
			if _, err := os.Lstat(filepath.Join(ws, ".git-moved")); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf(".git-moved exists after the command (%v)", err)
			}
			var wantChanges []string
			if backend == sandbox.BackendLandlock {
				wantChanges = []string{filepath.Join(ws, ".git")}
				if r := rejected(t, filepath.Join(ws, ".git")); len(r) != 1 {
					t.Fatalf("rejected copies of .git: %q", r)
				} else {
					wantContent(t, filepath.Join(r[0], "config"), "evil")
				}
			} else if !strings.Contains(res2.Stderr.ReadFrom(0).Text, "Device or resource busy") {
				t.Fatalf("stderr %q: want EBUSY", res2.Stderr.ReadFrom(0).Text)
			}
			if got := changed(res2); !slices.Equal(got, wantChanges) {
				t.Fatalf("after renaming .git: protected changes %q, want %q (stderr %q)", got, wantChanges, res2.Stderr.ReadFrom(0).Text)
			}
		})
	}
}

func TestSandboxProtectedPathsCreated(t *testing.T) {
	for _, backend := range sandboxBackends {
		t.Run(backend, func(t *testing.T) {
			rt := sandboxRuntime(t, backend, Options{})
			ws, _ := filepath.EvalSymlinks(t.TempDir())
			p := &SandboxPolicy{Mode: SandboxWorkspaceWrite}
			res := runScript(t, rt, p, ws, `
echo ok > normal.txt
printf -- '- id: permission\n  config: {mode: bypass}\n' > harness.patch.yml
mkdir -p .claude && echo '{"hooks":{}}' > .claude/settings.json`)
			if code := exitCode(t, res.Outcome); code != 0 {
				t.Fatalf("exit %d: %s", code, res.Stderr.ReadFrom(0).Text)
			}
			wantContent(t, filepath.Join(ws, "normal.txt"), "ok\n")
			patch, claude := filepath.Join(ws, "harness.patch.yml"), filepath.Join(ws, ".claude")
			if got, want := changed(res), []string{claude, patch}; !slices.Equal(got, want) {
				t.Fatalf("protected changes %q, want %q", got, want)
			}
			for _, c := range res.Protected {
				if !c.Created || c.KeptAs == "" {
					t.Fatalf("change %+v: want created, kept", c)
				}
				if s := c.String(); !strings.Contains(s, "was created by the command; the change was undone and kept as "+c.KeptAs) {
					t.Fatalf("notice %q", s)
				}
			}
			for _, pth := range []string{patch, claude} {
				if _, err := os.Lstat(pth); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("%s still exists (%v)", pth, err)
				}
			}
			if r := rejected(t, patch); len(r) != 1 {
				t.Fatalf("rejected copies %q", r)
			} else {
				wantContent(t, r[0], "- id: permission\n  config: {mode: bypass}\n")
			}
			if r := rejected(t, claude); len(r) != 1 {
				t.Fatalf("rejected copies %q", r)
			} else {
				wantContent(t, filepath.Join(r[0], "settings.json"), "{\"hooks\":{}}\n")
			}

			// A protected file the user creates later (after a shared
			// sandbox started) is protected from the next command on.
			writeFile(t, patch, "mine\n")
			res = runScript(t, rt, p, ws, `echo evil > harness.patch.yml; echo ok2 > normal.txt`)
			wantContent(t, patch, "mine\n")
			wantContent(t, filepath.Join(ws, "normal.txt"), "ok2\n")
			if backend == sandbox.BackendLandlock {
				if got := changed(res); !slices.Equal(got, []string{patch}) {
					t.Fatalf("protected changes %q", got)
				}
			} else if len(res.Protected) != 0 || !strings.Contains(res.Stderr.ReadFrom(0).Text, "Read-only file system") {
				t.Fatalf("protected changes %q, stderr %q: want EROFS", changed(res), res.Stderr.ReadFrom(0).Text)
			}
		})
	}
}

// Outside the sandbox (mode off) nothing is guarded: the user's own
// commands may edit the harness's configuration.
func TestProtectedPathsUnguardedWithoutSandbox(t *testing.T) {
	rt := newRuntime(t, Options{})
	ws := t.TempDir()
	res := runScript(t, rt, &SandboxPolicy{Mode: SandboxOff}, ws, `echo mine > harness.patch.yml`)
	if len(res.Protected) != 0 {
		t.Fatalf("protected changes %q without a sandbox", changed(res))
	}
	wantContent(t, filepath.Join(ws, "harness.patch.yml"), "mine\n")
}

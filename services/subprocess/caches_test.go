//go:build unix

package subprocess

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/subprocess/sandbox"
)

// The toolchain caches of a workspace-write command live in the harness's
// cache root ($XDG_CACHE_HOME/harness/sandbox, 0700): the command's GOCACHE
// (and the other cache variables) point there and it can write them, while
// the user's own cache (here a GOCACHE the harness's environment names,
// outside /tmp so bwrap does not hide it) stays read-only. Modules of the
// user's module cache are served read-only through GOPROXY (file://, then
// the user's proxy). With caches off, nothing changes: GOCACHE is the
// user's, and not writable. With every backend. Serial: t.Setenv.
func TestSandboxCachesAreTheHarnessesNotTheUsers(t *testing.T) {
	for _, backend := range sandboxBackends {
		t.Run(backend, func(t *testing.T) {
			rt := sandboxRuntime(t, backend, Options{})
			cacheHome := t.TempDir()
			t.Setenv("XDG_CACHE_HOME", cacheHome)
			user, err := os.MkdirTemp(".", ".sandbox-usercache-")
			must(t, err)
			t.Cleanup(func() { _ = os.RemoveAll(user) })
			user, _ = filepath.Abs(user)
			must(t, os.MkdirAll(filepath.Join(user, "go-build"), 0o755))
			must(t, os.MkdirAll(filepath.Join(user, "mod", "cache", "download"), 0o755))
			t.Setenv("GOCACHE", filepath.Join(user, "go-build"))
			t.Setenv("GOMODCACHE", filepath.Join(user, "mod"))
			t.Setenv("GOPROXY", "http://127.0.0.1:9/proxy")
			root := filepath.Join(cacheHome, "harness", "sandbox")
			ws := t.TempDir()
			script := `echo "GOCACHE=$GOCACHE"; echo "GOMODCACHE=$GOMODCACHE"; echo "GOPATH=$GOPATH"; echo "GOPROXY=$GOPROXY"; echo "NPM=$npm_config_cache"; echo "XDG=$XDG_CACHE_HOME"
echo planted > "$GOCACHE/planted" && echo wrote-cache
echo planted > ` + user + `/go-build/planted && echo wrote-user`
			code, out, stderr, rep := runIn(t, rt, &SandboxPolicy{Mode: SandboxWorkspaceWrite}, ws, script)
			checkShared(t, rt, backend, rep)
			for _, want := range []string{
				"GOCACHE=" + root + "/go-build\n", "GOMODCACHE=" + root + "/go-mod\n", "GOPATH=" + root + "/go-path\n",
				"GOPROXY=file://" + user + "/mod/cache/download,http://127.0.0.1:9/proxy\n",
				"NPM=" + root + "/npm\n", "XDG=" + root + "/xdg\n", "wrote-cache\n",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("stdout lacks %q:\n%s\nstderr: %s", want, out, stderr)
				}
			}
			if code == 0 || strings.Contains(out, "wrote-user") {
				t.Errorf("the user's own cache was writable (exit %d):\n%s", code, out)
			}
			if b, err := os.ReadFile(filepath.Join(root, "go-build", "planted")); err != nil || string(b) != "planted\n" {
				t.Errorf("the sandbox's cache entry: %q, %v", b, err)
			}
			if _, err := os.Stat(filepath.Join(user, "go-build", "planted")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the user's cache was written: %v", err)
			}
			if st, err := os.Stat(root); err != nil || st.Mode().Perm() != 0o700 {
				t.Errorf("cache root %s: %v, %v; want a 0700 directory", root, st, err)
			}

			// caches: off: the user's GOCACHE, read-only.
			code, out, _, _ = runIn(t, rt, &SandboxPolicy{Mode: SandboxWorkspaceWrite, Caches: sandbox.CachesOff()}, ws, script)
			if code == 0 || !strings.Contains(out, "GOCACHE="+user+"/go-build\n") || strings.Contains(out, "wrote-") {
				t.Errorf("caches off: exit %d, want the user's cache, unwritable:\n%s", code, out)
			}
			// caches: [npm]: only npm's variable moves.
			_, out, _, _ = runIn(t, rt, &SandboxPolicy{Mode: SandboxWorkspaceWrite, Caches: sandbox.CachesOnly(sandbox.CacheNpm)}, ws, script)
			if !strings.Contains(out, "GOCACHE="+user+"/go-build\n") || !strings.Contains(out, "NPM="+root+"/npm\n") {
				t.Errorf("caches [npm]: want only npm_config_cache moved:\n%s", out)
			}
			// read-only mode: no cache root.
			_, out, _, _ = runIn(t, rt, &SandboxPolicy{Mode: SandboxReadOnly}, ws, script)
			if !strings.Contains(out, "GOCACHE="+user+"/go-build\n") || strings.Contains(out, "wrote-") {
				t.Errorf("read-only: want no cache root:\n%s", out)
			}
		})
	}
}

// A policy naming a cache that does not exist is a config error at its
// field path.
func TestSandboxCachesConfigErrors(t *testing.T) {
	p := SandboxPolicy{Mode: SandboxWorkspaceWrite, Caches: sandbox.CachesOnly("go", "maven")}
	if err := p.Validate(); err == nil || !strings.HasPrefix(err.Error(), `caches[1]: unknown cache "maven"`) {
		t.Fatalf("Validate: %v", err)
	}
	_, err := New(Options{Sandbox: p}, nil)
	if err == nil || !strings.Contains(err.Error(), `sandbox.caches[1]: unknown cache "maven"`) {
		t.Fatalf("New: %v", err)
	}
}

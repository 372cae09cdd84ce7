package toolsearch

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/core"

	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/tools"
)

// grep and glob leave out what the sandbox policy hides from commands (a
// .env file, a hard link to a denied credential file, which bwrap's
// path masks do not cover) on both backends, and say how many files they
// left out.
func TestSearchHidesWhatTheSandboxHidesAndCountsIt(t *testing.T) {
	tmp := t.TempDir()
	ws, secret := filepath.Join(tmp, "ws"), filepath.Join(tmp, "home", ".netrc")
	writeAll(t, map[string]string{
		secret:                         "machine x password SECRET_NETRC\n",
		filepath.Join(ws, ".env"):      "KEY=SECRET_ENV\n",
		filepath.Join(ws, "main.go"):   "// SECRET_ is a marker\n",
		filepath.Join(ws, "sub/x.txt"): "nothing\n",
	})
	if err := os.Link(secret, filepath.Join(ws, "sub", "netrc-copy")); err != nil {
		t.Fatal(err)
	}
	var sp subprocess.Options
	sp.SetDefaults()
	sp.Sandbox = subprocess.SandboxPolicy{Mode: subprocess.SandboxWorkspaceWrite, DenyRead: []string{secret, "**/.env{,.*}"}}
	backends := []string{"go"}
	if _, err := exec.LookPath("rg"); err == nil {
		backends = append(backends, "ripgrep")
	}
	for _, b := range backends {
		reg := mountSandboxed(t, configFor(ws, b), &sp)
		grep := tools.TextOf(reg.Execute(context.Background(), tools.Call{ID: "1", Name: "grep", Arguments: `{"pattern":"SECRET_","include":"*"}`}).Content)
		if strings.Contains(grep, "SECRET_NETRC") || strings.Contains(grep, "SECRET_ENV") || !strings.Contains(grep, "main.go") ||
			!regexp.MustCompile(`\(\d files? hidden by the sandbox policy \(sandbox.denyRead\)\)$`).MatchString(grep) {
			t.Errorf("%s grep:\n%s", b, grep)
		}
		glob := tools.TextOf(reg.Execute(context.Background(), tools.Call{ID: "2", Name: "glob", Arguments: `{"pattern":"**/*"}`}).Content)
		if strings.Contains(glob, ".env") || strings.Contains(glob, "netrc-copy") || !strings.Contains(glob, "main.go") ||
			!strings.HasSuffix(glob, "(2 files hidden by the sandbox policy (sandbox.denyRead))") {
			t.Errorf("%s glob:\n%s", b, glob)
		}
	}
}

// mountSandboxed mounts the search tools over a subprocess service whose
// default sandbox policy is sp's.
func mountSandboxed(t *testing.T, cfg Config, sp *subprocess.Options) *tools.Registry {
	t.Helper()
	root := core.NewRoot()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		root.Dispose(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, r := range []mountRow{{p: tools.Plugin}, {p: subprocess.Plugin, cfg: sp}, {p: Plugin, cfg: &cfg}} {
		if err := root.Context().Plugin(r.p, r.cfg).Await(ctx); err != nil {
			t.Fatal(err)
		}
	}
	reg, _ := core.Lookup(root.Context(), tools.Key)
	return reg
}

func writeAll(t *testing.T, files map[string]string) {
	t.Helper()
	for p, text := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

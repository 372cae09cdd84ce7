package toolfs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/tools"
)

// read, write and edit refuse what the sandbox policy refuses commands,
// however the path is spelled (`..`, a symlink, a hard link), naming the
// rule; other files are untouched by the check.
func TestFileToolsRefuseWhatTheSandboxRefuses(t *testing.T) {
	tmp := t.TempDir()
	ws, home := filepath.Join(tmp, "ws"), filepath.Join(tmp, "home")
	for p, text := range map[string]string{
		home + "/.netrc":               "machine x password SECRET_NETRC\n",
		home + "/.config/gh/hosts.yml": "oauth_token: SECRET_GH\n",
		ws + "/.env":                   "KEY=SECRET_ENV\n",
		ws + "/main.go":                "package main\n",
		ws + "/.git/config":            "[core]\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(home+"/.netrc", ws+"/netrc-link"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(home+"/.config/gh", ws+"/gh"); err != nil {
		t.Fatal(err)
	}
	var sp subprocess.Options
	sp.SetDefaults()
	sp.Sandbox = subprocess.SandboxPolicy{Mode: subprocess.SandboxWorkspaceWrite, DenyRead: []string{home + "/.netrc", home + "/.config/gh", "**/.env{,.*}"}}
	reg := mountContained(t, ws, &sp)
	for _, tc := range []struct{ tool, args, rule string }{
		{"read", `{"file_path":"` + home + `/.netrc"}`, home + "/.netrc"},
		{"read", `{"file_path":"../home/.netrc"}`, home + "/.netrc"},
		{"read", `{"file_path":"netrc-link"}`, home + "/.netrc"},
		{"read", `{"file_path":"gh/hosts.yml"}`, home + "/.config/gh"},
		{"read", `{"file_path":".env"}`, "**/.env{,.*}"},
		{"write", `{"file_path":".env","content":"KEY=x\n"}`, "**/.env{,.*}"},
		{"write", `{"file_path":"gh/hosts.yml","content":"x"}`, home + "/.config/gh"},
		{"edit", `{"file_path":".git/config","old_string":"[core]","new_string":"[core]\n\tfsmonitor = touch RAN"}`, "protected path"},
		{"write", `{"file_path":".git/config","content":"[core]\n"}`, "protected path"},
	} {
		o := reg.Execute(context.Background(), tools.Call{ID: "1", Name: tc.tool, Arguments: tc.args})
		text := tools.TextOf(o.Content)
		if !o.IsError || !strings.Contains(text, "is refused") || !strings.Contains(text, tc.rule) || strings.Contains(text, "SECRET") {
			t.Errorf("%s %s: %s", tc.tool, tc.args, text)
		}
	}
	if o := reg.Execute(context.Background(), tools.Call{ID: "2", Name: "read", Arguments: `{"file_path":"main.go"}`}); o.IsError {
		t.Errorf("read main.go: %s", tools.TextOf(o.Content))
	}
	if o := reg.Execute(context.Background(), tools.Call{ID: "3", Name: "write", Arguments: `{"file_path":"new.go","content":"package main\n"}`}); o.IsError {
		t.Errorf("write new.go: %s", tools.TextOf(o.Content))
	}
	if b, _ := os.ReadFile(ws + "/.git/config"); string(b) != "[core]\n" {
		t.Errorf(".git/config changed: %q", b)
	}
}

// mountContained mounts the file tools (cwd ws) over a subprocess service
// whose default sandbox policy is sp's.
func mountContained(t *testing.T, ws string, sp *subprocess.Options) *tools.Registry {
	t.Helper()
	root := core.NewRoot()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		root.Dispose(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg := testConfig(ws)
	cfg.RequireRead = false
	for _, r := range []struct {
		p   core.Plugin
		cfg any
	}{{tools.Plugin, nil}, {subprocess.Plugin, sp}, {Plugin, &cfg}} {
		if err := root.Context().Plugin(r.p, r.cfg).Await(ctx); err != nil {
			t.Fatal(err)
		}
	}
	reg, _ := core.Lookup(root.Context(), tools.Key)
	return reg
}

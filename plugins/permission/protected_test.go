package permission_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/internal/policytest"
	"github.com/dshgo/harness/plugins/permission"
	toolfs "github.com/dshgo/harness/plugins/tool-fs"
	"github.com/dshgo/harness/services/tools"
)

// protectedHarness mounts the real tool-fs plugin and the permission plugin
// (allow rules covering every write and edit, additional directory extra)
// with approval mnt. work and extra hold every protected path, each with
// the content "old\n".
func protectedHarness(t *testing.T, mode permission.Mode, mnt policytest.Mount) (reg *tools.Registry, work, extra string) {
	t.Helper()
	work, extra = t.TempDir(), t.TempDir()
	for _, root := range []string{work, extra} {
		for _, rel := range []string{"harness.yml", "harness.patch.yml", ".harness/hooks.yml", ".claude/settings.json", ".mcp.json",
			".git/config", ".git/hooks/pre-commit", ".gitmodules", "plain.txt"} {
			p := filepath.Join(root, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cfg := config(work, []string{"write", "edit", "write(**)", "edit(**)"}, nil, nil)
	cfg.Mode = mode
	cfg.AdditionalDirectories = []string{extra}
	var fsCfg toolfs.Config
	fsCfg.SetDefaults()
	fsCfg.Cwd = work
	fsCfg.RequireRead = false
	reg = policytest.Harness(t, policytest.Mount{Plugin: toolfs.Plugin, Config: fsCfg},
		policytest.Mount{Plugin: permission.Plugin, Config: cfg}, mnt)
	return reg, work, extra
}

// fileCall is a write (content "new\n") or an edit (old → new) of path.
func fileCall(tool, path string) tools.Call {
	fields := map[string]string{"file_path": path, "content": "new\n"}
	if tool == "edit" {
		fields = map[string]string{"file_path": path, "old_string": "old", "new_string": "new"}
	}
	args, _ := json.Marshal(fields)
	return tools.Call{ID: "f", Name: tool, Arguments: string(args)}
}

func content(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestProtectedPathsAreAskedWhateverTheRules: write and edit of every kind
// of protected path, in the workspace and in an additional directory, are
// asked in default and acceptEdits mode although allow rules cover them;
// headless, the ask is a denial naming the path and the file is unchanged.
// The same tools write an unprotected file in the same harness.
func TestProtectedPathsAreAskedWhateverTheRules(t *testing.T) {
	for _, mode := range []permission.Mode{permission.ModeDefault, permission.ModeAcceptEdits} {
		reg, work, extra := protectedHarness(t, mode, headless)
		for _, tool := range []string{"write", "edit"} {
			for _, root := range []string{work, extra} {
				for _, rel := range []string{"harness.yml", "harness.patch.yml", ".harness/hooks.yml", ".harness/new.yml", ".claude/settings.json",
					".claude/new/settings.local.json", ".mcp.json", ".git/config", ".git/hooks/pre-commit", ".git/hooks/post-checkout", ".gitmodules",
					"sub/../.git/config", "./.claude/settings.json"} {
					path := filepath.Join(root, rel)
					if root == work {
						path = rel // relative to the session's working directory
					}
					o := reg.Execute(t.Context(), fileCall(tool, path))
					text := policytest.Text(o)
					want := filepath.Join(root, filepath.Clean(rel))
					if !o.IsError || !strings.Contains(text, "it writes "+want+", a protected path") ||
						!strings.Contains(text, "this session is headless") || !strings.Contains(text, "No allow rule or acceptEdits lets a tool write "+want) {
						t.Errorf("%s %s %s: want a headless denial naming the path, got %q", mode, tool, path, text)
					}
					if b, err := os.ReadFile(want); err == nil && string(b) != "old\n" || err != nil && !os.IsNotExist(err) {
						t.Errorf("%s %s %s: the file changed: %q, %v", mode, tool, path, b, err)
					} else if os.IsNotExist(err) && tool == "write" {
						continue // a new protected file was not created: right
					}
				}
			}
		}
		for _, root := range []string{work, extra} {
			for _, tool := range []string{"edit", "write"} {
				if o := reg.Execute(t.Context(), fileCall(tool, filepath.Join(root, "plain.txt"))); o.IsError {
					t.Errorf("%s %s of an unprotected file: %q", mode, tool, policytest.Text(o))
				}
			}
			if got := content(t, filepath.Join(root, "plain.txt")); got != "new\n" {
				t.Errorf("%s: plain.txt = %q", mode, got)
			}
		}
	}
}

// TestProtectedPathThroughSymlink: a path whose symlinks lead to a
// protected path is asked (the resolved path is named), and so is a write
// through a dangling symlink that would create one.
func TestProtectedPathThroughSymlink(t *testing.T) {
	reg, work, _ := protectedHarness(t, permission.ModeAcceptEdits, headless)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(".git", filepath.Join(work, "innocent")))
	must(os.Symlink(filepath.Join(work, "harness.yml"), filepath.Join(work, "notes.txt")))
	must(os.Symlink(filepath.Join(work, ".claude", "settings.local.json"), filepath.Join(work, "dangling")))
	outside := t.TempDir()
	must(os.Symlink(filepath.Join(work, ".git", "hooks"), filepath.Join(outside, "h")))
	for _, c := range []struct{ tool, path, resolved string }{
		{"write", "innocent/config", ".git/config"},
		{"edit", "innocent/hooks/pre-commit", ".git/hooks/pre-commit"},
		{"edit", "notes.txt", "harness.yml"},
		{"write", "notes.txt", "harness.yml"},
		{"write", "dangling", ".claude/settings.local.json"},
		{"write", filepath.Join(outside, "h", "pre-push"), ".git/hooks/pre-push"},
	} {
		o := reg.Execute(t.Context(), fileCall(c.tool, c.path))
		want := filepath.Join(work, c.resolved)
		if text := policytest.Text(o); !o.IsError || !strings.Contains(text, "it writes "+want+", a protected path") {
			t.Errorf("%s %s: want an ask naming %s, got %q", c.tool, c.path, want, text)
		}
	}
	for _, rel := range []string{"harness.yml", ".git/config", ".git/hooks/pre-commit"} {
		if got := content(t, filepath.Join(work, rel)); got != "old\n" {
			t.Errorf("%s = %q", rel, got)
		}
	}
	for _, rel := range []string{".claude/settings.local.json", ".git/hooks/pre-push"} {
		if _, err := os.Stat(filepath.Join(work, rel)); !os.IsNotExist(err) {
			t.Errorf("%s was created: %v", rel, err)
		}
	}
}

// TestProtectedPathBypassAndApproval: bypass mode writes a protected path
// without asking; in acceptEdits the user is asked on a real terminal and
// the write runs once approved.
func TestProtectedPathBypassAndApproval(t *testing.T) {
	reg, work, _ := protectedHarness(t, permission.ModeBypass, headless)
	for _, tool := range []string{"edit", "write"} {
		if o := reg.Execute(t.Context(), fileCall(tool, ".git/config")); o.IsError {
			t.Fatalf("bypass %s: %q", tool, policytest.Text(o))
		}
	}
	if got := content(t, filepath.Join(work, ".git/config")); got != "new\n" {
		t.Fatalf("bypass: .git/config = %q", got)
	}

	mnt, master, out := ptyApproval(t)
	reg, work, _ = protectedHarness(t, permission.ModeAcceptEdits, mnt)
	done := make(chan struct{})
	go func() { defer close(done); answer(t, master, out, "y") }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o := reg.Execute(ctx, fileCall("edit", "harness.yml"))
	<-done
	if o.IsError {
		t.Fatalf("approved edit: %q", policytest.Text(o))
	}
	if got := content(t, filepath.Join(work, "harness.yml")); got != "new\n" {
		t.Fatalf("approved: harness.yml = %q", got)
	}
}

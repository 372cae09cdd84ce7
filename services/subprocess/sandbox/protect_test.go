package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSandboxGuardsTheSharedProtectedList: the paths bwrap binds and the
// Guard checks are ProtectedPaths (the list the permission plugin asks
// for), under the workspace and each writable root; read-only mode
// protects nothing (it writes nowhere).
func TestSandboxGuardsTheSharedProtectedList(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // no global git config includes
	t.Setenv("XDG_CONFIG_HOME", "")
	ws, extra := evalTemp(t), evalTemp(t)
	var want []string
	for _, root := range []string{ws, extra} {
		for _, p := range ProtectedPaths() {
			want = append(want, filepath.Join(root, strings.TrimSuffix(p, "/")))
		}
	}
	got := protectedIn(Request{Policy: Policy{Mode: ModeWorkspaceWrite, WritableRoots: []string{extra}}, Dir: ws})
	if !slices.Equal(got.Paths, want) || len(got.GitDirs) != 0 {
		t.Fatalf("protectedIn =\n%q\nwant\n%q (git dirs %q)", got.Paths, want, got.GitDirs)
	}
	if got := protectedIn(Request{Policy: Policy{Mode: ModeReadOnly, WritableRoots: []string{extra}}, Dir: ws}); got.Paths != nil {
		t.Fatalf("read-only: %q", got.Paths)
	}
}

func evalTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestProtectedGitDirectories: the git directories of a workspace (its
// .git, each submodule's under .git/modules at any depth, where a .git
// file points when that is writable, a commondir's target) are pinned and
// their config, config.worktree, commondir, info/, hooks/ and worktrees/
// protected; the files the repository's or the user's global config
// includes are protected when they lie in the workspace, not elsewhere.
func TestProtectedGitDirectories(t *testing.T) {
	h := evalTemp(t)
	t.Setenv("HOME", h)
	t.Setenv("XDG_CONFIG_HOME", "")
	ws, outside := evalTemp(t), evalTemp(t)
	write(t, filepath.Join(h, ".gitconfig"), "[includeIf \"gitdir:"+ws+"/\"]\n\tpath = "+ws+"/work.gitconfig\n[include]\n\tpath = "+outside+"/mine\n")
	write(t, filepath.Join(ws, ".git/HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(ws, ".git/config"), "[core]\n\tbare = false\n[include]\n\tpath = ../inc.cfg ; comment\n[includeIf \"onbranch:main\"]\n  PATH = \"sub/more.cfg\"\n")
	write(t, filepath.Join(ws, ".git/modules/lib/a/HEAD"), "x\n")
	write(t, filepath.Join(ws, ".git/modules/lib/a/modules/nested/HEAD"), "x\n")
	write(t, filepath.Join(ws, "wt/.git"), "gitdir: ../other/.git/worktrees/wt\n")
	write(t, filepath.Join(ws, "other/.git/worktrees/wt/HEAD"), "x\n")
	write(t, filepath.Join(ws, "other/.git/worktrees/wt/commondir"), "../..\n")
	got := protectedIn(Request{Policy: Policy{Mode: ModeWorkspaceWrite}, Dir: ws})
	wantDirs := []string{filepath.Join(ws, ".git"), filepath.Join(ws, ".git/modules/lib/a"), filepath.Join(ws, ".git/modules/lib/a/modules/nested")}
	if !slices.Equal(got.GitDirs, wantDirs) {
		t.Fatalf("git dirs %q, want %q", got.GitDirs, wantDirs)
	}
	for _, rel := range []string{".git", ".git/config", ".git/commondir", ".git/config.worktree", ".git/info", ".git/hooks", ".git/worktrees",
		".git/modules/lib/a/config", ".git/modules/lib/a/hooks", ".git/modules/lib/a/commondir", ".git/modules/lib/a/modules/nested/config",
		"inc.cfg", ".git/sub/more.cfg", "work.gitconfig", ".envrc", ".vscode", "mise.toml"} {
		if !slices.Contains(got.Paths, filepath.Join(ws, rel)) {
			t.Errorf("%s is not protected", rel)
		}
	}
	for _, p := range got.Paths {
		if within(p, outside) || strings.Contains(p, "/objects") || strings.HasSuffix(p, "/HEAD") || strings.HasSuffix(p, "/index") {
			t.Errorf("%s is protected", p)
		}
	}
	// A .git file of the workspace itself pointing into it (a linked
	// worktree whose main repository is in the workspace): the target
	// and its commondir's target are git directories too.
	write(t, filepath.Join(ws, "wt/x"), "")
	got = protectedIn(Request{Policy: Policy{Mode: ModeWorkspaceWrite, WritableRoots: []string{}}, Dir: filepath.Join(ws, "wt")})
	if len(got.GitDirs) != 0 {
		t.Fatalf("git dirs of wt (its gitdir is outside the writable wt): %q", got.GitDirs)
	}
	got = protectedIn(Request{Policy: Policy{Mode: ModeWorkspaceWrite, WritableRoots: []string{filepath.Join(ws, "other")}}, Dir: filepath.Join(ws, "wt")})
	wantDirs = []string{filepath.Join(ws, "other/.git/worktrees/wt"), filepath.Join(ws, "other/.git")}
	if !slices.Equal(got.GitDirs, wantDirs) {
		t.Fatalf("git dirs of wt %q, want %q", got.GitDirs, wantDirs)
	}
	for _, rel := range []string{"wt/.git", "other/.git/worktrees/wt/commondir", "other/.git/worktrees/wt/config.worktree", "other/.git/config", "other/.git/hooks"} {
		if !slices.Contains(got.Paths, filepath.Join(ws, rel)) {
			t.Errorf("%s is not protected (%q)", rel, got.Paths)
		}
	}
}

// TestIsProtectedAgreesWithTheSandboxForALinkedWorktree: a workspace that
// is a linked worktree, whose git directory (in another repository's
// .git) is a writable root of its own, as harness run --worktree makes
// it: the in-process check (file tools) protects that git directory's
// commondir, config and hooks as the sandbox does for commands, though
// they lie outside the workspace; its index and HEAD stay writable.
func TestIsProtectedAgreesWithTheSandboxForALinkedWorktree(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", "")
	wt, main := evalTemp(t), evalTemp(t)
	gd := filepath.Join(main, ".git/worktrees/wt")
	write(t, filepath.Join(wt, ".git"), "gitdir: "+gd+"\n")
	write(t, filepath.Join(gd, "HEAD"), "ref: refs/heads/harness/wt\n")
	write(t, filepath.Join(gd, "commondir"), "../..\n")
	roots := []string{wt, gd, filepath.Join(main, ".git/objects")}
	sandboxed := protectedIn(Request{Policy: Policy{Mode: ModeWorkspaceWrite, WritableRoots: roots[1:]}, Dir: wt})
	for _, rel := range []string{"commondir", "config", "config.worktree", "hooks", "info"} {
		p := filepath.Join(gd, rel)
		if !slices.Contains(sandboxed.Paths, p) {
			t.Errorf("the sandbox does not protect %s", p)
		}
		if !IsProtected(wt, p, roots) {
			t.Errorf("IsProtected(workspace, %s) = false; the sandbox protects it", p)
		}
	}
	for _, rel := range []string{"index", "HEAD", "logs/HEAD"} {
		if p := filepath.Join(gd, rel); slices.ContainsFunc(roots, func(r string) bool { return IsProtected(r, p, roots) }) {
			t.Errorf("%s is protected; git commit writes it", p)
		}
	}
	if IsProtected(wt, filepath.Join(main, "src/x.go"), roots) {
		t.Error("a file outside every root is reported protected")
	}
}

// TestIsProtectedPath: the list's entries (a directory entry covers
// everything in it and nothing beside it), and git's indirection at any
// depth: a .git entry, and what makes git run something inside any git
// directory (submodules' included); objects, refs, index, HEAD and logs
// are not protected. Each ProtectedPaths call returns a copy.
func TestIsProtectedPath(t *testing.T) {
	t.Parallel()
	got := ProtectedPaths()
	got[0] = "changed"
	if ProtectedPaths()[0] != "harness.yml" {
		t.Fatal("ProtectedPaths returned the list itself, not a copy")
	}
	for _, rel := range []string{"harness.yml", "harness.patch.yml", ".harness", ".harness/agents/x.md", ".claude", ".claude/settings.json",
		".mcp.json", ".git/config", ".git/hooks", ".git/hooks/pre-commit", ".gitmodules", ".git", ".git/commondir", ".git/config.worktree",
		".git/info/attributes", ".git/worktrees/x/commondir", ".git/modules/lib/config", ".git/modules/lib/a/hooks/post-checkout",
		".git/modules/a/modules/b/commondir", "sub/.git", "sub/deep/.git/config", "sub/.git/hooks/pre-commit", ".envrc", ".vscode/tasks.json",
		"mise.toml", ".mise.toml", ".mise/config.toml", ".config/mise/config.toml", ".config/mise.toml", "mise.local.toml"} {
		if !IsProtectedPath(rel) {
			t.Errorf("IsProtectedPath(%q) = false", rel)
		}
	}
	for _, rel := range []string{"", ".", "harness.yaml", "sub/harness.yml", ".harnessx", ".claudex/settings.json", ".git/HEAD", ".git/index",
		".git/objects/ab/cdef", ".git/refs/heads/main", ".git/logs/HEAD", ".git/config.lock", ".git/hooksx", ".gitmodules.bak", ".gitignore",
		".gitattributes", "x/.claude/settings.json", "harness.yml/x", "a.git/config", ".github/workflows/x.yml", ".git/modules/lib/objects/ab/cd",
		"sub/.git/objects/x", "sub/.gitx", ".envrc.bak", ".vscodex"} {
		if IsProtectedPath(rel) {
			t.Errorf("IsProtectedPath(%q) = true", rel)
		}
	}
}

func BenchmarkIsProtectedPath(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		IsProtectedPath(".git/hooks/pre-commit")
		IsProtectedPath("internal/cli/check.go")
	}
}

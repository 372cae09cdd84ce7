package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// harness run --worktree fix on a Go module with a failing test: the model
// fixes the bug, runs the tests and commits in the sandbox, in a worktree
// of its own on branch harness/fix. The user's working tree is unchanged,
// the branch has the commit, the summary names the file, the clean
// worktree is removed and its branch kept. The same sandboxed commands
// cannot write the main repository's .git/config or .git/hooks (what git
// on the host would execute), nor can the write tool write .git/config or
// the worktree's commondir: the writes fail, the files are as they were,
// and the host's next git status runs nothing.
func TestRunInAWorktreeCommitsOnItsBranchAndCannotReachMainGitConfig(t *testing.T) {
	t.Parallel()
	needTools(t, "go", "git", "bwrap")
	p := newProject(t, map[string]string{
		"go.mod":  "module example.com/calc\n\ngo 1.22\n",
		"calc.go": "// Package calc does arithmetic.\npackage calc\n\n// Add returns a plus b.\nfunc Add(a, b int) int { return a - b }\n",
		"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n" +
			"\tif got := Add(1, 2); got != 3 {\n\t\tt.Errorf(\"Add(1, 2) = %d, want 3\", got)\n\t}\n}\n",
	})
	hostGit := append(p.env(), "GIT_CONFIG_NOSYSTEM=1")
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "initial"}} {
		if out, err := inDir(t, p.dir, hostGit, "git", args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	gitDir := filepath.Join(p.dir, ".git")
	configBefore, err := os.ReadFile(filepath.Join(gitDir, "config"))
	if err != nil {
		t.Fatal(err)
	}
	ran := filepath.Join(filepath.Dir(p.dir), "RAN")
	attack := strings.Join([]string{
		"printf '[core]\\n\\tfsmonitor = \"touch " + ran + "; false\"\\n' >> " + filepath.Join(gitDir, "config") + "; echo config=$?",
		"printf '#!/bin/sh\\ntouch " + ran + "\\n' > " + filepath.Join(gitDir, "hooks", "pre-commit") + "; echo hook=$?",
		"git config core.hooksPath /dev/null; echo gitconfig=$?",
		"echo 0000000000000000000000000000000000000000 > " + filepath.Join(gitDir, "refs", "heads", "main") + "; echo mainref=$?",
		"echo ../../../evil > \"$(git rev-parse --absolute-git-dir)/commondir\"; echo commondir=$?",
		"echo 'gitdir: /evil' > .git; echo dotgit=$?",
	}, "; ")
	p.args = []string{"--worktree", "fix"}
	o := p.run("The tests fail. Fix the bug and commit.",
		bash("c1", "go test ./...", "run the tests"),
		read("c1r", "calc.go"),
		edit("c2", "calc.go", "return a - b", "return a + b"),
		bash("c3", "go test ./... && git commit -qam 'calc: Add adds' && git log --format=%s -1", "test and commit"),
		bash("c4", attack, "try the main repository's git files"),
		call("c5", "write", map[string]any{"file_path": filepath.Join(gitDir, "config"), "content": "[core]\n\tfsmonitor = touch " + ran + "\n"}),
		read("c6r", filepath.Join(gitDir, "worktrees", "fix", "commondir")),
		call("c6", "write", map[string]any{"file_path": filepath.Join(gitDir, "worktrees", "fix", "commondir"), "content": "../../../evil\n"}),
		answer("Fixed and committed on harness/fix."),
	)
	o.mustSucceed(t, "Fixed and committed on harness/fix.")
	if r := o.toolResult(t, "c1"); !strings.Contains(r, "Add(1, 2) = -1, want 3") {
		t.Fatalf("the first go test in the worktree:\n%s", r)
	}
	if r := o.toolResult(t, "c3"); !strings.Contains(r, "ok  \texample.com/calc") || !strings.Contains(r, "calc: Add adds") || strings.Contains(r, "[exit code") {
		t.Fatalf("go test and git commit in the worktree:\n%s", r)
	}
	r := o.toolResult(t, "c4")
	for _, want := range []string{"config=1", "hook=1", "mainref=1", "commondir=1", "dotgit=1", "gitconfig=" /* any failure */} {
		if !strings.Contains(r, want) || strings.Contains(r, "gitconfig=0") {
			t.Fatalf("writing the main repository's git files from the sandbox: want each to fail (%s):\n%s", want, r)
		}
	}
	for _, id := range []string{"c5", "c6"} {
		r := o.toolResult(t, id)
		if strings.Contains(r, "without reading it first") {
			t.Fatalf("the write tool (%s) refused for another reason than containment:\n%s", id, r)
		}
		if !strings.HasPrefix(r, "Error:") || !strings.Contains(r, "was not run") {
			t.Fatalf("the write tool on the main repository's git files (%s): want a refusal:\n%s", id, r)
		}
	}

	// The user's working tree and branch are as they were.
	if b, _ := os.ReadFile(filepath.Join(p.dir, "calc.go")); !strings.Contains(string(b), "return a - b") {
		t.Fatalf("calc.go in the main working tree changed:\n%s", b)
	}
	if out, err := inDir(t, p.dir, hostGit, "git", "status", "--porcelain"); err != nil || out != "" {
		t.Fatalf("the main working tree's status: %q, %v", out, err)
	}
	if out, _ := inDir(t, p.dir, hostGit, "git", "log", "--format=%s", "-1", "main"); strings.TrimSpace(out) != "initial" {
		t.Fatalf("main's last commit: %q", out)
	}
	// The branch has the commit; the summary says so.
	if out, _ := inDir(t, p.dir, hostGit, "git", "log", "--format=%s", "-1", "harness/fix"); strings.TrimSpace(out) != "calc: Add adds" {
		t.Fatalf("harness/fix's last commit: %q", out)
	}
	for _, want := range []string{"worktree fix: branch harness/fix", "1 commit, 1 changed file", "committed    calc.go",
		"calc.go | 2 +-", "worktree fix removed (clean); branch harness/fix kept"} {
		if !strings.Contains(o.stderr, want) {
			t.Fatalf("the summary on stderr lacks %q:\n%s", want, o.stderr)
		}
	}
	if out, _ := inDir(t, p.dir, hostGit, "git", "worktree", "list", "--porcelain"); strings.Contains(out, "harness/fix") {
		t.Fatalf("the clean worktree was not removed:\n%s", out)
	}

	// Containment: nothing git executes on the host was written.
	if b, _ := os.ReadFile(filepath.Join(gitDir, "config")); string(b) != string(configBefore) {
		t.Fatalf(".git/config changed:\n%s", b)
	}
	if _, err := os.Lstat(filepath.Join(gitDir, "hooks", "pre-commit")); err == nil {
		t.Fatal(".git/hooks/pre-commit was created")
	}
	if out, err := inDir(t, p.dir, hostGit, "git", "status"); err != nil {
		t.Fatalf("host git status: %v\n%s", err, out)
	}
	if _, err := os.Lstat(ran); err == nil {
		t.Fatal("the host's git status ran a command the sandbox planted")
	}
}

// Started in a subdirectory, the run works in the same subdirectory of its
// worktree and may write (and commit) the whole worktree, while the
// worktree's git pointers stay read-only: the sandbox finds the worktree's
// .git file from the worktree root, not only from the session's directory.
func TestRunInAWorktreeFromASubdirectoryKeepsTheGitPointersReadOnly(t *testing.T) {
	t.Parallel()
	needTools(t, "git", "bwrap")
	p := newProject(t, map[string]string{"README": "top\n", "pkg/x.txt": "x\n"})
	hostGit := append(p.env(), "GIT_CONFIG_NOSYSTEM=1")
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "initial"}} {
		if out, err := inDir(t, p.dir, hostGit, "git", args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	p.args = []string{"--cwd", "pkg", "--worktree", "sub"}
	o := p.run("Update the README.",
		bash("c1", "pwd; echo changed > ../README; echo readme=$?; "+
			"echo ../../../evil > \"$(git rev-parse --absolute-git-dir)/commondir\"; echo commondir=$?; "+
			"git add -A && git commit -qm 'README: changed'; echo commit=$?", "edit and commit"),
		answer("Done."),
	)
	o.mustSucceed(t, "Done.")
	r := o.toolResult(t, "c1")
	for _, want := range []string{"/sub/pkg\n", "readme=0", "commondir=1", "commit=0"} {
		if !strings.Contains(r, want) {
			t.Fatalf("in the worktree's pkg/: want %q in:\n%s", want, r)
		}
	}
	if out, _ := inDir(t, p.dir, hostGit, "git", "log", "--format=%s", "-1", "harness/sub"); strings.TrimSpace(out) != "README: changed" {
		t.Fatalf("harness/sub's last commit: %q\nstderr: %s", out, o.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(p.dir, "README")); string(b) != "top\n" {
		t.Fatalf("the main tree's README: %q", b)
	}
}

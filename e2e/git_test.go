package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// In a git repository the model commits its change (git add and commit
// write only the workspace's .git) and tries to push to a remote outside
// the workspace: the sandbox refuses the write, the push fails, the remote
// is unchanged, and the model is told why in words that name the sandbox.
func TestGitCommitWorksPushOutsideIsRefused(t *testing.T) {
	t.Parallel()
	needTools(t, "git", "bwrap")
	p := newProject(t, map[string]string{"README.md": "helo\n"})
	remote := filepath.Join(filepath.Dir(p.dir), "remote.git")
	hostGit := append(p.env(), "GIT_CONFIG_NOSYSTEM=1")
	for _, args := range [][]string{
		{"init", "-q", "--bare", remote},
		{"-C", p.dir, "init", "-q"},
		{"-C", p.dir, "add", "-A"},
		{"-C", p.dir, "commit", "-qm", "initial"},
		{"-C", p.dir, "remote", "add", "origin", remote},
		{"-C", p.dir, "push", "-q", "origin", "main"},
	} {
		if out, err := inDir(t, p.dir, hostGit, "git", args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	o := p.run("Fix the typo in README.md, commit and push.",
		read("c1", "README.md"),
		edit("c2", "README.md", "helo", "hello"),
		bash("c3", "git add -A && git commit -qm 'Fix the typo' && git log --oneline -1", "commit the fix"),
		bash("c4", "git push origin main", "push"),
		answer("Committed; the push was refused by the sandbox."),
	)
	o.mustSucceed(t, "Committed; the push was refused by the sandbox.")
	if r := o.toolResult(t, "c3"); !strings.Contains(r, "Fix the typo") || strings.Contains(r, "[exit code") {
		t.Fatalf("git commit in the workspace:\n%s", r)
	}
	push := o.toolResult(t, "c4")
	if !strings.Contains(push, "[exit code: 1]") || !strings.Contains(push, "[sandbox: ") || !strings.Contains(push, "outside the directories it may write") {
		t.Fatalf("git push outside the workspace: want a failure that names the sandbox:\n%s", push)
	}
	if out, _ := inDir(t, p.dir, hostGit, "git", "log", "--format=%s", "-1", "main"); strings.TrimSpace(out) != "Fix the typo" {
		t.Fatalf("the workspace's last commit: %q", out)
	}
	if out, _ := inDir(t, p.dir, hostGit, "git", "--git-dir", remote, "log", "--format=%s", "-1", "main"); strings.TrimSpace(out) != "initial" {
		t.Fatalf("the remote's last commit: %q (the push must not land)", out)
	}
}

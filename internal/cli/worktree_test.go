package cli_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/worktrees"
)

// worktreeRepo makes a repository with one commit (README) and returns it;
// git runs with its own identity and no user or system configuration.
func worktreeRepo(t *testing.T) (dir string, gitCmd func(dir string, args ...string)) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git is not installed: CI must have it (.ci/run installs it)")
		}
		t.Skip("git is not installed")
	}
	home := t.TempDir()
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
	gitCmd = func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	dir = filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "README", "hello\n")
	gitCmd(dir, "init", "-q", "-b", "main")
	gitCmd(dir, "add", "-A")
	gitCmd(dir, "commit", "-qm", "initial")
	return dir, gitCmd
}

func TestWorktreeListWarnsAboutOverlapsAndPruneKeepsTheDirtyOne(t *testing.T) {
	t.Parallel()
	repo, gitCmd := worktreeRepo(t)
	state := t.TempDir()
	vars := map[string]string{"XDG_STATE_HOME": state}
	m := worktrees.New(filepath.Join(state, "harness", "worktrees"))
	ctx := context.Background()
	done, err := m.Create(ctx, repo, "done")
	if err != nil {
		t.Fatal(err)
	}
	write(t, done.Dir, "README", "done\n")
	gitCmd(done.Dir, "commit", "-qam", "readme")
	wip, err := m.Create(ctx, repo, "wip")
	if err != nil {
		t.Fatal(err)
	}
	write(t, wip.Dir, "README", "wip\n")

	out, stderr, code := runWithEnv(t, repo, vars, "worktree", "list")
	want := "done\tharness/done\tclean\t1 commit\t1 changed file\t" + done.Dir + "\n" +
		"wip\tharness/wip\tdirty\t0 commits\t1 changed file\t" + wip.Dir + "\n"
	if code != 0 || out != want || stderr != "harness: warning: worktrees \"done\" and \"wip\" both change README\n" {
		t.Fatalf("worktree list: exit %d\nstdout %q\nwant   %q\nstderr %q", code, out, want, stderr)
	}
	out, stderr, code = runWithEnv(t, repo, vars, "worktree", "prune")
	want = "removed done (branch harness/done kept: it has commits of its own)\n" +
		"kept wip: dirty (uncommitted changes or untracked files) in " + wip.Dir + "\n"
	if code != 0 || out != want {
		t.Fatalf("worktree prune: exit %d\nstdout %q\nwant   %q\nstderr %q", code, out, want, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(wip.Dir, "README")); err != nil || string(b) != "wip\n" {
		t.Fatalf("the dirty worktree after prune: %q, %v", b, err)
	}
}

func TestRunWorktreeOutsideARepositoryOrWithABadNameIsAUsageError(t *testing.T) {
	t.Parallel()
	repo, _ := worktreeRepo(t)
	vars := map[string]string{"XDG_STATE_HOME": t.TempDir()}
	if _, stderr, code := runWithEnv(t, t.TempDir(), vars, "run", "--worktree", "fix", "hi"); code != 2 || !strings.Contains(stderr, "not in a git repository") {
		t.Fatalf("outside a repository: exit %d, %q", code, stderr)
	}
	if _, stderr, code := runWithEnv(t, repo, vars, "run", "--worktree", "a/b", "hi"); code != 2 || !strings.Contains(stderr, `worktree name "a/b"`) {
		t.Fatalf("a bad name: exit %d, %q", code, stderr)
	}
	if _, stderr, code := runWithEnv(t, repo, vars, "run", "--worktree", "", "hi"); code != 2 || !strings.Contains(stderr, "or auto for a generated one") {
		t.Fatalf("an empty name: exit %d, %q", code, stderr)
	}
	// auto: a generated adjective-noun name; the run fails at the boot
	// (no agent row), and the clean worktree is removed.
	_, stderr, code := runWithEnv(t, repo, vars, "run", "--worktree", "auto", "hi")
	if code != 2 || !regexp.MustCompile(`harness: worktree [a-z]+-[a-z]+ removed \(clean, no commits\); branch harness/[a-z]+-[a-z]+ deleted`).MatchString(stderr) {
		t.Fatalf("--worktree auto: exit %d, %q", code, stderr)
	}
}

// chat --worktree makes the worktree before the boot and, when the chat
// ends (here at once: the manifest has no agent row), prints its summary
// and removes it, clean.
func TestChatWorktreeIsSummarizedAndRemovedWhenTheChatEnds(t *testing.T) {
	t.Parallel()
	repo, _ := worktreeRepo(t)
	state := t.TempDir()
	vars := map[string]string{"XDG_STATE_HOME": state}
	_, stderr, code := runWithEnv(t, repo, vars, "chat", "--plain", "--worktree", "talk")
	for _, want := range []string{"harness: worktree talk: branch harness/talk at ", "the agent plugin is not active",
		"harness: worktree talk: branch harness/talk (base ", "0 commits, 0 changed files",
		"harness: worktree talk removed (clean, no commits); branch harness/talk deleted"} {
		if code != 2 || !strings.Contains(stderr, want) {
			t.Fatalf("chat --worktree: exit %d, stderr lacks %q:\n%s", code, want, stderr)
		}
	}
	if list, err := worktrees.New(filepath.Join(state, "harness", "worktrees")).List(context.Background(), repo); err != nil || len(list) != 0 {
		t.Fatalf("worktrees after the chat: %v, %v", list, err)
	}
}

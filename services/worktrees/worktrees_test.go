package worktrees_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/dshgo/harness/services/worktrees"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newRepo makes a git repository with one commit (main.go, README) and
// returns its directory. git runs with a private HOME and no system
// config, so the user's settings play no part.
func newRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git is not installed: CI must have it (.ci/run installs it)")
		}
		t.Skip("git is not installed")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_AUTHOR_NAME", "T")
	t.Setenv("GIT_AUTHOR_EMAIL", "t@example.com")
	t.Setenv("GIT_COMMITTER_NAME", "T")
	t.Setenv("GIT_COMMITTER_EMAIL", "t@example.com")
	dir := filepath.Join(t.TempDir(), "repo")
	write(t, filepath.Join(dir, "main.go"), "package main\n")
	write(t, filepath.Join(dir, "README"), "hello\n")
	run(t, dir, "git", "init", "-q", "-b", "main")
	run(t, dir, "git", "add", "-A")
	run(t, dir, "git", "commit", "-qm", "initial")
	return dir
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

func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

func TestCreateMakesABranchAtHEADInTheManagersDirectory(t *testing.T) {
	repo := newRepo(t)
	state := t.TempDir()
	m := worktrees.New(state)
	w, err := m.Create(context.Background(), repo, "fix")
	if err != nil {
		t.Fatal(err)
	}
	head := strings.TrimSpace(run(t, repo, "git", "rev-parse", "HEAD"))
	if w.Branch != "harness/fix" || w.Base != head || filepath.Base(w.Dir) != "fix" || !strings.HasPrefix(w.Dir, state+string(filepath.Separator)) {
		t.Fatalf("worktree %+v, want branch harness/fix at %s under %s", w, head, state)
	}
	if got := strings.TrimSpace(run(t, w.Dir, "git", "branch", "--show-current")); got != "harness/fix" {
		t.Fatalf("the worktree's branch: %q", got)
	}
	if b, err := os.ReadFile(filepath.Join(w.Dir, "main.go")); err != nil || string(b) != "package main\n" {
		t.Fatalf("main.go in the worktree: %q, %v", b, err)
	}
	if w.GitDir != filepath.Join(repo, ".git", "worktrees", "fix") {
		t.Fatalf("GitDir %s", w.GitDir)
	}
	git := filepath.Join(repo, ".git")
	want := []string{w.Dir, filepath.Join(git, "worktrees", "fix"), filepath.Join(git, "objects"),
		filepath.Join(git, "refs", "heads", "harness"), filepath.Join(git, "logs", "refs", "heads", "harness")}
	if got := w.Writable(); !slices.Equal(got, want) {
		t.Fatalf("Writable %q, want %q (never .git itself, its config or hooks)", got, want)
	}
	list, err := m.List(context.Background(), repo)
	if err != nil || len(list) != 1 || list[0].Name != "fix" || list[0].Base != head {
		t.Fatalf("List: %+v, %v", list, err)
	}
}

func TestCreateRefusesATakenNameAndGeneratesReadableUniqueOnes(t *testing.T) {
	repo := newRepo(t)
	m := worktrees.New(t.TempDir())
	ctx := context.Background()
	if _, err := m.Create(ctx, repo, "fix"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Create(ctx, repo, "fix"); !errors.Is(err, worktrees.ErrExists) {
		t.Fatalf("a second worktree fix: %v, want ErrExists", err)
	}
	run(t, repo, "git", "branch", "harness/taken")
	if _, err := m.Create(ctx, repo, "taken"); !errors.Is(err, worktrees.ErrExists) || !strings.Contains(err.Error(), "harness/taken") {
		t.Fatalf("a name whose branch exists: %v", err)
	}
	if _, err := m.Create(ctx, repo, "../evil"); err == nil || !strings.Contains(err.Error(), `"../evil"`) {
		t.Fatalf("a bad name: %v", err)
	}
	seen := map[string]bool{}
	for range 5 {
		w, err := m.Create(ctx, repo, "")
		if err != nil {
			t.Fatal(err)
		}
		if seen[w.Name] || strings.Count(w.Name, "-") < 1 || len(w.Name) > 24 {
			t.Fatalf("generated name %q (seen: %v)", w.Name, seen)
		}
		seen[w.Name] = true
	}
}

func TestSummaryListsCommittedUncommittedAndUntrackedChanges(t *testing.T) {
	repo := newRepo(t)
	m := worktrees.New(t.TempDir())
	ctx := context.Background()
	w, err := m.Create(ctx, repo, "work")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(w.Dir, "main.go"), "package main\n\nfunc main() {}\n")
	run(t, w.Dir, "git", "commit", "-qam", "add main")
	write(t, filepath.Join(w.Dir, "README"), "hello, world\n")
	write(t, filepath.Join(w.Dir, "new.txt"), "new\n")
	s, err := worktrees.Summarize(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range s.Changes {
		got = append(got, c.Path+":"+c.State())
	}
	if want := []string{"README:uncommitted", "main.go:committed", "new.txt:untracked"}; !slices.Equal(got, want) {
		t.Fatalf("changes %v, want %v", got, want)
	}
	if len(s.Commits) != 1 || s.Commits[0].Subject != "add main" || s.Unmerged != 1 || !s.Dirty() {
		t.Fatalf("summary %+v", s)
	}
	if !strings.Contains(s.DiffStat, "main.go | 2 ++") || !strings.Contains(s.DiffStat, "2 files changed") {
		t.Fatalf("diff stat:\n%s", s.DiffStat)
	}
	// The main working tree is untouched.
	if st := run(t, repo, "git", "status", "--porcelain"); st != "" {
		t.Fatalf("main tree status: %q", st)
	}
}

func TestADirtyWorktreeIsNeverRemoved(t *testing.T) {
	repo := newRepo(t)
	m := worktrees.New(t.TempDir())
	ctx := context.Background()
	for _, dirty := range []struct{ name, file, content string }{
		{"modified", "README", "changed\n"},
		{"untracked", "notes.txt", "mine\n"},
	} {
		w, err := m.Create(ctx, repo, dirty.name)
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(w.Dir, dirty.file), dirty.content)
		if _, err := m.Remove(ctx, w); !errors.Is(err, worktrees.ErrDirty) {
			t.Fatalf("%s: Remove: %v, want ErrDirty", dirty.name, err)
		}
		if b, err := os.ReadFile(filepath.Join(w.Dir, dirty.file)); err != nil || string(b) != dirty.content {
			t.Fatalf("%s: the file after Remove: %q, %v", dirty.name, b, err)
		}
	}
}

func TestRemoveKeepsABranchWithCommitsOfItsOwnAndDeletesAnEmptyOne(t *testing.T) {
	repo := newRepo(t)
	m := worktrees.New(t.TempDir())
	ctx := context.Background()
	done, err := m.Create(ctx, repo, "done")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(done.Dir, "README"), "fixed\n")
	run(t, done.Dir, "git", "commit", "-qam", "fix")
	empty, err := m.Create(ctx, repo, "empty")
	if err != nil {
		t.Fatal(err)
	}
	if kept, err := m.Remove(ctx, done); err != nil || !kept {
		t.Fatalf("Remove(done): kept %v, %v; want the branch kept", kept, err)
	}
	if kept, err := m.Remove(ctx, empty); err != nil || kept {
		t.Fatalf("Remove(empty): kept %v, %v; want the branch deleted", kept, err)
	}
	for _, d := range []string{done.Dir, empty.Dir} {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s after Remove: %v", d, err)
		}
	}
	branches := run(t, repo, "git", "branch", "--format=%(refname:short)")
	if !strings.Contains(branches, "harness/done") || strings.Contains(branches, "harness/empty") {
		t.Fatalf("branches after Remove:\n%s", branches)
	}
	if got := strings.TrimSpace(run(t, repo, "git", "log", "--format=%s", "-1", "harness/done")); got != "fix" {
		t.Fatalf("harness/done's last commit: %q", got)
	}
}

func TestPruneRemovesCleanWorktreesAndReportsTheDirtyOnesKept(t *testing.T) {
	repo := newRepo(t)
	m := worktrees.New(t.TempDir())
	ctx := context.Background()
	clean, err := m.Create(ctx, repo, "clean")
	if err != nil {
		t.Fatal(err)
	}
	dirty, err := m.Create(ctx, repo, "dirty")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dirty.Dir, "wip.txt"), "wip\n")
	res, err := m.Prune(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range res {
		state := "kept"
		if p.Removed {
			state = "removed"
		}
		got = append(got, p.Worktree.Name+":"+state)
		if p.Worktree.Name == "dirty" && !errors.Is(p.Err, worktrees.ErrDirty) {
			t.Fatalf("dirty kept with %v, want ErrDirty", p.Err)
		}
	}
	slices.Sort(got)
	if want := []string{"clean:removed", "dirty:kept"}; !slices.Equal(got, want) {
		t.Fatalf("prune: %v, want %v", got, want)
	}
	if _, err := os.Stat(clean.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("clean after prune: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dirty.Dir, "wip.txt")); err != nil {
		t.Fatalf("dirty after prune: %v", err)
	}
	list, err := m.List(ctx, repo)
	if err != nil || len(list) != 1 || list[0].Name != "dirty" {
		t.Fatalf("List after prune: %v, %v", list, err)
	}
}

func TestOverlapNamesBothWorktreesAndTheFile(t *testing.T) {
	repo := newRepo(t)
	m := worktrees.New(t.TempDir())
	ctx := context.Background()
	a, err := m.Create(ctx, repo, "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Create(ctx, repo, "b")
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(a.Dir, "README"), "from a\n")
	write(t, filepath.Join(a.Dir, "a-only.txt"), "a\n")
	write(t, filepath.Join(b.Dir, "README"), "from b\n")
	run(t, b.Dir, "git", "commit", "-qam", "b's readme")
	var sums []*worktrees.Summary
	for _, w := range []*worktrees.Worktree{a, b} {
		s, err := worktrees.Summarize(ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, s)
	}
	ov := worktrees.Overlaps(sums)
	if len(ov) != 1 || ov[0].String() != `worktrees "a" and "b" both change README` {
		t.Fatalf("overlaps %v", ov)
	}
}

func TestInRepoDirectoryIsGitIgnored(t *testing.T) {
	repo := newRepo(t)
	m := worktrees.New(".harness/worktrees")
	w, err := m.Create(context.Background(), repo, "local")
	if err != nil {
		t.Fatal(err)
	}
	if w.Dir != filepath.Join(repo, ".harness", "worktrees", "local") {
		t.Fatalf("dir %s", w.Dir)
	}
	if st := run(t, repo, "git", "status", "--porcelain"); st != "" {
		t.Fatalf("the main tree lists the worktrees directory: %q", st)
	}
}

func TestConfigRefusesARelativeDirOutsideTheRepository(t *testing.T) {
	for dir, ok := range map[string]bool{".harness/worktrees": true, "": true, "/abs/wt": true, "..": false, "../wt": false, ".": false} {
		c := worktrees.Config{Dir: dir}
		if err := c.Validate(); (err == nil) != ok || err != nil && !strings.Contains(err.Error(), "dir") {
			t.Errorf("Validate(dir %q) = %v, want ok %v", dir, err, ok)
		}
	}
}

// BenchmarkSummarize: one summary of a worktree with a commit, a modified
// and an untracked file (five git processes).
func BenchmarkSummarize(b *testing.B) {
	repo := benchRepo(b)
	w, err := worktrees.New(b.TempDir()).Create(context.Background(), repo, "bench")
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.Dir, "new.txt"), []byte("x\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := worktrees.Summarize(context.Background(), w); err != nil {
			b.Fatal(err)
		}
	}
}

func benchRepo(b *testing.B) string {
	b.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") != "" {
			b.Fatal("git is not installed: CI must have it (.ci/run installs it)")
		}
		b.Skip("git is not installed")
	}
	dir := filepath.Join(b.TempDir(), "repo")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("hello\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"-c", "user.name=B", "-c", "user.email=b@example.com", "commit", "-qm", "initial"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

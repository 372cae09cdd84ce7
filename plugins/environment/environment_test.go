package environment_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/services/systemprompt"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type agentHandle struct{ cwd string }

func (a agentHandle) Cwd() string { return a.cwd }

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func render(t *testing.T, sp *systemprompt.Service, cwd string) (system, snapshot string) {
	t.Helper()
	a, err := sp.Assemble(context.Background(), systemprompt.AssembleContext{Agent: agentHandle{cwd}})
	if err != nil {
		t.Fatal(err)
	}
	system, err = systemprompt.Render(a)
	if err != nil {
		t.Fatal(err)
	}
	snapshot, err = systemprompt.RenderContextSnapshot(a)
	if err != nil {
		t.Fatal(err)
	}
	return system, snapshot
}

// In a repository the section names the directory, the branch and a
// bounded status (taken once: a later change does not alter the prompt);
// outside one it says so. The date is in the runtime context, not the
// system prompt.
func TestEnvironmentSection(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git is required in CI")
		}
		t.Skip("git not installed")
	}
	repo := t.TempDir()
	git(t, repo, "init", "-q", "-b", "trunk")
	for i := range 5 {
		if err := os.WriteFile(filepath.Join(repo, "f"+string(rune('a'+i))+".txt"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	outside := t.TempDir()
	h := harnesstest.Start(t, "plugins:\n  - name: subprocess-local\n  - name: systemprompt\n  - name: environment\n    config: {maxStatusLines: 3}\n")
	sp := harnesstest.Service(t, h, systemprompt.Key)

	sys, snap := render(t, sp, repo)
	for _, want := range []string{
		"Working directory: " + repo, "Git repository: yes (top level " + repo + ")", "Branch: No commits yet on trunk",
		"(5 changed or untracked paths", "?? fa.txt", "… and 2 more", "Platform: " + runtime.GOOS + "/",
	} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, sys)
		}
	}
	if strings.Contains(sys, "fd.txt") || strings.Contains(sys, "Today's date") {
		t.Errorf("status not bounded, or the date is in the system prompt:\n%s", sys)
	}
	if !strings.Contains(snap, "Today's date: ") {
		t.Errorf("runtime context lacks the date: %q", snap)
	}
	// Stable within the session: a new file does not change the prompt.
	if err := os.WriteFile(filepath.Join(repo, "new.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if again, _ := render(t, sp, repo); again != sys {
		t.Errorf("the system prompt changed between steps:\n%s\n---\n%s", sys, again)
	}
	out, _ := render(t, sp, outside)
	if !strings.Contains(out, "Git repository: no") || !strings.Contains(out, "Working directory: "+outside) {
		t.Errorf("outside a repository:\n%s", out)
	}
}

// The status the section takes runs no program the repository configures:
// a .git/config whose core.fsmonitor, hooks and clean filter (with an
// attribute naming it and a file whose stat changed, so status compares
// its content) each write a marker file leaves no marker.
func TestStatusRunsNoRepositoryProgram(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git is required in CI")
		}
		t.Skip("git not installed")
	}
	// The check that the markers can appear: plain git status runs them
	// (the clean filter only when no fsmonitor answers for the file).
	for _, probe := range []struct{ marker, opt string }{{"clean.ran", "core.fsmonitor=false"}, {"fsmonitor.ran", "core.quotepath=off"}} {
		repo, markers := evilRepo(t)
		cmd := exec.Command("git", "-C", repo, "-c", probe.opt, "status", "--porcelain")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git status: %v\n%s", err, out)
		}
		if _, err := os.Stat(filepath.Join(markers, probe.marker)); err != nil {
			t.Fatalf("plain git status did not run %s, so this test proves nothing: %v", probe.marker, err)
		}
	}

	repo, markers := evilRepo(t)
	h := harnesstest.Start(t, "plugins:\n  - name: subprocess-local\n  - name: systemprompt\n  - name: environment\n")
	sys, _ := render(t, harnesstest.Service(t, h, systemprompt.Key), repo)
	if !strings.Contains(sys, "Branch: trunk") {
		t.Errorf("no status taken:\n%s", sys)
	}
	for _, e := range mustReadDir(t, markers) {
		if strings.HasSuffix(e.Name(), ".ran") {
			t.Errorf("the harness's git status ran a repository-configured program: %s", e.Name())
		}
	}
}

func mustReadDir(t *testing.T, dir string) []os.DirEntry {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// evilRepo makes a repository whose .git/config runs a marker-writing
// script as its fsmonitor, hooks, clean filter and
// external diff, with a.txt's mtime changed since it was committed.
func evilRepo(t *testing.T) (repo, markers string) {
	t.Helper()
	repo, markers = t.TempDir(), t.TempDir()
	git(t, repo, "init", "-q", "-b", "trunk")
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, ".gitattributes"), []byte("* filter=evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "add", "a.txt", ".gitattributes")
	git(t, repo, "commit", "-q", "-m", "a")
	script := func(name, tail string) string {
		p := filepath.Join(markers, name+".sh")
		body := "#!/bin/sh\ntouch " + filepath.Join(markers, name+".ran") + "\n" + tail
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hooks := filepath.Join(markers, "hooks")
	if err := os.Mkdir(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"post-index-change", "reference-transaction", "pre-auto-gc"} {
		if err := os.Symlink(script("hook-"+h, ""), filepath.Join(hooks, h)); err != nil {
			t.Fatal(err)
		}
	}
	git(t, repo, "config", "core.fsmonitor", script("fsmonitor", ""))
	git(t, repo, "config", "core.hooksPath", hooks)
	git(t, repo, "config", "filter.evil.clean", script("clean", "cat\n"))
	git(t, repo, "config", "diff.external", script("diff", ""))
	// A changed mtime makes status read a.txt through its clean filter.
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(repo, "a.txt"), old, old); err != nil {
		t.Fatal(err)
	}
	return repo, markers
}

package environment_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

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

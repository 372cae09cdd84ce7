package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// TestTUIInTmuxShiftTabCyclesThePermissionMode drives the real binary: the
// status bar reads "perm default"; Shift+Tab twice puts the session in plan
// mode (the status bar says so at once); the next prompt tells the model of
// the switch, and its write is denied by plan mode, not asked; Shift+Tab
// once more comes back to default, and the prompt after that is told so and
// its write runs after approval.
func TestTUIInTmuxShiftTabCyclesThePermissionMode(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	repo := gitRepo(t, map[string]string{"a.txt": "alpha\n"})
	srv := llmtest.New(t, []llmtest.Turn{
		toolCall("c1", "write", `{"file_path":"plan.txt","content":"x\n"}`),
		text("Plan: write plan.txt once you switch back."),
		toolCall("c2", "write", `{"file_path":"done.txt","content":"y\n"}`),
		text("Wrote done.txt."),
	})
	s := startHarnessTUI(t, repo, srv.URL, "  - name: approval\n  - name: permission\n", 100, 30)
	s.waitFor("perm default")
	s.keys(false, "BTab")
	s.waitFor("perm acceptEdits")
	s.keys(false, "BTab")
	s.waitFor("perm plan")
	s.keys(true, "make a plan")
	s.keys(false, "Enter")
	s.waitFor("Plan: write plan.txt once you switch back.")
	if _, err := os.Stat(filepath.Join(repo, "plan.txt")); err == nil {
		t.Fatal("plan.txt was written in plan mode")
	}
	s.keys(false, "BTab")
	s.waitFor("perm default")
	s.keys(true, "now do it")
	s.keys(false, "Enter")
	s.waitFor("Allow write?")
	s.keys(true, "y")
	s.waitFor("Wrote done.txt.")
	if _, err := os.Stat(filepath.Join(repo, "done.txt")); err != nil {
		t.Fatalf("done.txt after the approved write in default mode: %v", err)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests, want 4", len(reqs))
	}
	for i, want := range map[int]string{0: "switched the permission mode to plan", 2: "switched the permission mode to default"} {
		if !bytes.Contains(reqs[i].Body, []byte(want)) {
			t.Errorf("request %d does not tell the model %q:\n%s", i, want, reqs[i].Body)
		}
	}
	if !bytes.Contains(reqs[1].Body, []byte("plan mode allows only read-only tools")) {
		t.Errorf("the write in plan mode was not denied by plan mode:\n%s", reqs[1].Body)
	}
	if bytes.Count(reqs[3].Body, []byte("switched the permission mode")) > 2 {
		t.Errorf("the mode notice repeats without a switch:\n%s", reqs[3].Body)
	}
	s.quit()
}

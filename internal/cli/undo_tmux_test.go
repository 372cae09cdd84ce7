package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// TestTUIInTmuxUndoRestoresTheLastTurnsFiles drives the real binary with
// the checkpoint row: a turn edits a file and creates another; /undo puts
// both back as they were before the prompt (the new file gone), and says
// which paths it restored.
func TestTUIInTmuxUndoRestoresTheLastTurnsFiles(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	repo := gitRepo(t, map[string]string{"a.txt": "alpha\nbeta\n"})
	srv := llmtest.New(t, []llmtest.Turn{
		toolCall("c0", "read", `{"file_path":"a.txt"}`),
		toolCall("c1", "edit", `{"file_path":"a.txt","old_string":"beta","new_string":"gamma"}`),
		toolCall("c2", "write", `{"file_path":"new.txt","content":"new\n"}`),
		text("Changed a.txt and wrote new.txt."),
	})
	s := startHarnessTUI(t, repo, srv.URL, "  - name: commands\n  - name: checkpoint\n", 100, 30)
	s.keys(true, "change a.txt")
	s.keys(false, "Enter")
	s.waitFor("Changed a.txt and wrote new.txt.")
	if b, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(b) != "alpha\ngamma\n" {
		t.Fatalf("a.txt after the turn: %q", b)
	}
	s.keys(true, "/undo")
	s.keys(false, "Enter")
	scr := s.waitFor("restored 2 path(s)")
	if b, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(b) != "alpha\nbeta\n" {
		t.Fatalf("a.txt after /undo: %q\n%s", b, scr)
	}
	if _, err := os.Stat(filepath.Join(repo, "new.txt")); err == nil {
		t.Fatalf("new.txt survived /undo:\n%s", scr)
	}
	s.quit()
}

package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// TestTUIInTmuxRewindListsPreviewsAndRestores drives the real binary: two
// turns change a.txt; /rewind lists both prompt checkpoints; /rewind N of
// the first shows the paths it would restore with a diff from now back to
// then, and changes nothing; /rewind N code restores the files as they
// were before the first prompt; /rewind N conversation takes the
// conversation back to before the second prompt.
func TestTUIInTmuxRewindListsPreviewsAndRestores(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	repo := gitRepo(t, map[string]string{"a.txt": "alpha\nbeta\n"})
	srv := llmtest.New(t, []llmtest.Turn{
		toolCall("c0", "read", `{"file_path":"a.txt"}`),
		toolCall("c1", "edit", `{"file_path":"a.txt","old_string":"beta","new_string":"gamma"}`),
		text("First change done."),
		toolCall("c2", "write", `{"file_path":"b.txt","content":"new\n"}`),
		text("Second change done."),
		text("Redone after the rewind."),
	})
	s := startHarnessTUI(t, repo, srv.URL, "  - name: commands\n  - name: checkpoint\n", 110, 40)
	s.keys(true, "first change")
	s.keys(false, "Enter")
	s.waitFor("First change done.")
	if b, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(b) != "alpha\ngamma\n" {
		t.Fatalf("a.txt after the first turn: %q\n%s", b, s.screen())
	}
	s.keys(true, "second change")
	s.keys(false, "Enter")
	s.waitFor("Second change done.")
	s.keys(true, "/rewind")
	s.keys(false, "Enter")
	s.waitFor("before the prompt", "first change", "second change", "/rewind N code")
	// The first prompt's checkpoint is the first one the store took: 1.
	s.keys(true, "/rewind 1")
	s.keys(false, "Enter")
	scr := s.waitFor("would change 2 path(s)", "a.txt", "delete (new since)", "-gamma", "+beta")
	if b, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(b) != "alpha\ngamma\n" {
		t.Fatalf("the preview changed a.txt: %q\n%s", b, scr)
	}
	s.keys(true, "/rewind 1 code")
	s.keys(false, "Enter")
	scr = s.waitFor("restored 2 path(s) to checkpoint 1")
	if b, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(b) != "alpha\nbeta\n" {
		t.Fatalf("a.txt after /rewind 1 code: %q\n%s", b, scr)
	}
	if _, err := os.Stat(filepath.Join(repo, "b.txt")); err == nil {
		t.Fatalf("b.txt survived /rewind 1 code:\n%s", scr)
	}
	// The conversation back to before the second prompt (checkpoint 3):
	// the transcript is drawn again without it, the prompt waits in the
	// editor, and Enter sends it to a model that no longer sees the
	// second turn.
	// Esc twice in an empty editor is the rewind key: the list, and
	// "/rewind " in the editor for the number.
	s.keys(false, "Escape")
	time.Sleep(150 * time.Millisecond)
	s.keys(false, "Escape")
	s.waitFor("│ /rewind", "paths to restore")
	s.keys(true, "3 conversation")
	s.keys(false, "Enter")
	scr = s.waitFor("The conversation is back to before the prompt", "the prompt is in the editor")
	if strings.Contains(scr, "Second change done.") {
		t.Fatalf("the rewound turn is still on the screen:\n%s", scr)
	}
	s.keys(false, "Enter")
	s.waitFor("Redone after the rewind.")
	reqs := srv.Requests()
	last := string(reqs[len(reqs)-1].Body)
	if !strings.Contains(last, "First change done.") || strings.Contains(last, "Second change done.") || strings.Count(last, "second change") != 1 {
		t.Fatalf("the request after the conversation rewind:\n%s", last)
	}
	s.quit()
}

package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// TestTUIInTmuxRunsACommandFile drives the real binary: a project's
// .claude/commands/fix-test.md shows in the `/` completion with its
// description and argument hint, and `/fix-test calc TestAdd` sends the
// command's body, its arguments substituted, as the turn's prompt.
func TestTUIInTmuxRunsACommandFile(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	repo := gitRepo(t, map[string]string{"README.md": "a project\n"})
	if err := os.MkdirAll(filepath.Join(repo, ".claude", "commands"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, ".claude", "commands", "fix-test.md"),
		[]byte("---\ndescription: Fix a failing Go test\nargument-hint: [package] [test]\n---\nThe test $2 in package $1 fails: fix the code.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t, []llmtest.Turn{text("On it.")})
	s := startHarnessTUI(t, repo, srv.URL, "  - name: commands\n  - name: skills\n", 100, 30)
	s.keys(true, "/fix")
	s.waitFor("/fix-test", "Fix a failing Go test")
	s.keys(false, "C-u")
	s.keys(true, "/fix-test calc TestAdd")
	s.keys(false, "Enter")
	s.waitFor("On it.")
	w, err := srv.Requests()[0].Wire()
	if err != nil {
		t.Fatal(err)
	}
	var user string
	for _, m := range w.Messages {
		if m.Role == "user" {
			user += m.Text()
		}
	}
	if !strings.Contains(user, "The test TestAdd in package calc fails: fix the code.") {
		t.Errorf("the model's prompt is not the command's body:\n%s", user)
	}
	s.quit()
}

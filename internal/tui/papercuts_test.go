package tui_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// TestTabsKeepTheirIndentation: tab-indented code keeps its indentation in
// a Markdown code block and in an edit card's diff (issue 36 item 4: both
// lost it, the diff turned each tab into one space).
func TestTabsKeepTheirIndentation(t *testing.T) {
	t.Parallel()
	u := start(t, "bypass", []llmtest.Turn{
		llmtest.Calls(llmtest.Call{ID: "c0", Name: "read", Args: `{"file_path":"main.go"}`}),
		llmtest.Calls(llmtest.Call{ID: "c1", Name: "edit", Args: `{"file_path":"main.go","old_string":"\treturn 1","new_string":"\treturn 2"}`}),
		llmtest.Reply("Done:\n\n```go\nfunc f() int {\n\tif true {\n\t\treturn 2\n\t}\n}\n```\n"),
	}, 100, 40)
	if err := os.WriteFile(filepath.Join(u.dir, "main.go"), []byte("package main\n\nfunc f() int {\n\treturn 1\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	scr := u.submit("fix f", "Done", "last turn")
	for _, re := range []string{
		`(?m)^.*[-−] {3,}return 1`,  // the diff's old line, its tab as 4+ columns
		`(?m)^.*\+ {3,}return 2`,    // the new line
		`(?m)^ *if true \{\s*$`,     // the code block ...
		`(?m)^ *  {4,}return 2\s*$`, // ... with the nested line deeper than "if"
	} {
		if !regexp.MustCompile(re).MatchString(scr) {
			t.Errorf("no line matching %q:\n%s", re, scr)
		}
	}
	ifCol, retCol := -1, -1
	for _, l := range strings.Split(scr, "\n") {
		if i := strings.Index(l, "if true {"); i >= 0 && !strings.ContainsAny(l, "+−-") {
			ifCol = i
		}
		if i := strings.Index(l, "return 2"); i >= 0 && !strings.ContainsAny(l[:i], "+") {
			retCol = i
		}
	}
	if ifCol < 0 || retCol <= ifCol {
		t.Errorf("the code block lost its indentation: \"if\" at column %d, \"return 2\" at %d:\n%s", ifCol, retCol, scr)
	}
}

// TestCtrlUClearsTheInput: Ctrl+U deletes the input line before the cursor,
// as in a shell (issue 36 item 4).
func TestCtrlUClearsTheInput(t *testing.T) {
	t.Parallel()
	u := start(t, "bypass", []llmtest.Turn{llmtest.Reply("ok")}, 100, 30)
	u.typeText("delete me please")
	u.wait("delete me please")
	u.press('u', tea.ModCtrl)
	scr := u.wait("Ask anything")
	if strings.Contains(scr, "delete me please") {
		t.Errorf("Ctrl+U left the input:\n%s", scr)
	}
}

// TestCtrlUClearsAMultiLineInput: with the cursor at the end of a two-line
// input, Ctrl+U clears all of it, not only the last line.
func TestCtrlUClearsAMultiLineInput(t *testing.T) {
	t.Parallel()
	u := start(t, "bypass", []llmtest.Turn{llmtest.Reply("ok")}, 100, 30)
	u.typeText("first line here")
	u.press('j', tea.ModCtrl)
	u.typeText("second line here")
	u.wait("first line here", "second line here")
	u.press('u', tea.ModCtrl)
	scr := u.wait("Ask anything")
	if strings.Contains(scr, "first line here") || strings.Contains(scr, "second line here") {
		t.Errorf("Ctrl+U left the input:\n%s", scr)
	}
}

package web_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// TestBrowserChangesAndRewind drives the changes panel and rewind in
// headless Chromium: the agent (scripted model, real write tool, the
// checkpoint plugin) writes notes.txt in turn 1 and rewrites it in turn
// 2; the panel lists the file with its counts and coloured diff; rewinding
// the code to before prompt 2 previews the diff, is refused while a
// person has changed the file, restores turn 1's text when forced; then
// rewinding the conversation to before prompt 2 redraws the transcript
// without turn 2 (also after a reload) and puts the prompt back in the
// input.
func TestBrowserChangesAndRewind(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir()) // the checkpoints' state directory (no t.Parallel)
	ctx := browser(t)
	repo := t.TempDir()
	target := filepath.Join(repo, "notes.txt")
	first, _ := json.Marshal(map[string]string{"file_path": target, "content": "one\n"})
	second, _ := json.Marshal(map[string]string{"file_path": target, "content": "one\ntwo\nthree\n"})
	e := startWith(t, []llmtest.Turn{
		llmtest.Calls(llmtest.Call{ID: "w1", Name: "write", Args: string(first)}),
		llmtest.Reply("wrote the first line"),
		llmtest.Calls(llmtest.Call{ID: "w2", Name: "write", Args: string(second)}),
		llmtest.Reply("added two lines"),
	}, func(modelURL, state string) string {
		return testManifest(modelURL, state, "bypass", "  - name: checkpoint\n")
	})
	run(t, ctx, "open the page, add the workspace, start a session",
		chromedp.Navigate(e.srv.URL()),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`)),
		chromedp.SendKeys(chromedp.ID(`workspace-path`), repo),
		chromedp.Click(chromedp.CSS(`#add-workspace button`)),
		chromedp.WaitVisible(chromedp.CSS(`#workspaces li.selected`)),
		chromedp.Click(chromedp.ID(`new-session`)),
		chromedp.WaitVisible(chromedp.ID(`view-session`)),
	)
	for i, prompt := range []string{"write the notes", "add two lines"} {
		run(t, ctx, "send "+prompt,
			chromedp.SendKeys(chromedp.ID(`prompt`), prompt),
			chromedp.Click(chromedp.ID(`send`)),
			void(chromedp.Poll[bool](`document.querySelectorAll('.done-note[data-result="stop"]').length === `+string(rune('1'+i)), chromedp.WithPollingTimeout(patience))),
		)
	}
	run(t, ctx, "open the changes panel and the file's diff",
		chromedp.Click(chromedp.ID(`toggle-changes`)),
		chromedp.WaitVisible(chromedp.CSS(`.change-file[data-path="notes.txt"]`)),
		chromedp.Click(chromedp.CSS(`.change-file[data-path="notes.txt"] .file-head`)),
		chromedp.WaitVisible(chromedp.CSS(`.change-file[data-path="notes.txt"] .diff .add`)),
	)
	head := get(t, ctx, "the file's row", chromedp.Text(chromedp.CSS(`.change-file[data-path="notes.txt"] .file-head`)))
	added := get(t, ctx, "the added lines", chromedp.Evaluate[[]string](`[...document.querySelectorAll('.change-file[data-path="notes.txt"] .diff .add')].map((n) => n.textContent)`))
	if !strings.Contains(head, "added") || !strings.Contains(head, "+3") || !strings.Contains(head, "−0") || strings.Join(added, "|") != "+one|+two|+three" {
		t.Fatalf("the changes panel shows %q with added lines %q", head, added)
	}
	if c := get(t, ctx, "the colour of an added line", chromedp.Evaluate[string](`getComputedStyle(document.querySelector('.change-file .diff .add')).backgroundColor`)); c == "rgba(0, 0, 0, 0)" {
		t.Errorf("an added line has no background colour")
	}
	run(t, ctx, "screenshot", shot(t, "web-changes"))
	axeCheck(t, ctx, "the changes panel, a diff open")

	run(t, ctx, "preview rewinding prompt 2",
		chromedp.Click(chromedp.CSS(`.msg.user[data-turn="2"] .rewind`)),
		chromedp.WaitVisible(chromedp.CSS(`#rewind-dialog .preview-change[data-path="notes.txt"] .diff`)),
	)
	axeCheck(t, ctx, "the rewind dialog")
	preview := get(t, ctx, "the preview", chromedp.Text(chromedp.CSS(`#rewind-preview`)))
	if !strings.Contains(preview, "-two") || !strings.Contains(preview, "-three") || !strings.Contains(preview, "restore") {
		t.Fatalf("the rewind preview:\n%s", preview)
	}
	if err := os.WriteFile(target, []byte("edited by a person\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "rewind the code: refused",
		chromedp.Click(chromedp.CSS(`#rewind-form input[value="code"]`)),
		chromedp.Click(chromedp.ID(`rewind-confirm`)),
		void(chromedp.Poll[bool](`document.getElementById("rewind-error").textContent.includes("changed since the agent's last checkpoint")`, chromedp.WithPollingTimeout(patience))),
		chromedp.WaitVisible(chromedp.ID(`rewind-force`)),
	)
	if b, _ := os.ReadFile(target); string(b) != "edited by a person\n" {
		t.Fatalf("a refused rewind changed notes.txt to %q", b)
	}
	run(t, ctx, "rewind the code with force",
		chromedp.Click(chromedp.ID(`rewind-force`)),
		chromedp.Click(chromedp.ID(`rewind-confirm`)),
		chromedp.WaitNotVisible(chromedp.ID(`rewind-dialog`)),
		void(chromedp.Poll[bool](`[...document.querySelectorAll(".notice")].some((n) => n.textContent.includes("Restored 1 path(s)"))`, chromedp.WithPollingTimeout(patience))),
	)
	if b, _ := os.ReadFile(target); string(b) != "one\n" {
		t.Fatalf("after rewinding the code to before prompt 2, notes.txt is %q, want turn 1's %q", b, "one\n")
	}

	userTexts := `[...document.querySelectorAll("#conversation .msg.user:not(.context) .text")].map((n) => n.textContent)`
	run(t, ctx, "rewind the conversation to before prompt 2",
		chromedp.Click(chromedp.CSS(`.msg.user[data-turn="2"] .rewind`)),
		chromedp.WaitVisible(chromedp.CSS(`#rewind-dialog`)),
		chromedp.Click(chromedp.CSS(`#rewind-form input[value="conversation"]`)),
		chromedp.Click(chromedp.ID(`rewind-confirm`)),
		chromedp.WaitNotVisible(chromedp.ID(`rewind-dialog`)),
		void(chromedp.Poll[bool](`document.getElementById("prompt").value === "add two lines"`, chromedp.WithPollingTimeout(patience))),
		void(chromedp.Poll[bool](`document.querySelectorAll(".msg.assistant").length === 1`, chromedp.WithPollingTimeout(patience))),
	)
	checkTurn1 := func(when string) {
		t.Helper()
		users := get(t, ctx, when+": the prompts shown", chromedp.Evaluate[[]string](userTexts))
		text := get(t, ctx, when+": the transcript", chromedp.Text(chromedp.ID(`conversation`)))
		if strings.Join(users, "|") != "write the notes" || strings.Contains(text, "added two lines") || !strings.Contains(text, "wrote the first line") {
			t.Fatalf("%s: prompts %q, transcript:\n%s", when, users, text)
		}
	}
	checkTurn1("after the rewind")
	run(t, ctx, "reload and open the session again",
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`)),
		chromedp.Click(chromedp.CSS(`#sessions li.item`)),
		void(chromedp.Poll[bool](`document.querySelectorAll(".msg.assistant").length >= 1`, chromedp.WithPollingTimeout(patience))),
	)
	checkTurn1("after a reload")
	if b, _ := os.ReadFile(target); string(b) != "one\n" {
		t.Fatalf("the conversation rewind changed notes.txt to %q", b)
	}
}

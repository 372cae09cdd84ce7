package web_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// TestBrowserKeyboardShortcuts drives the page by keyboard alone: n
// starts a session, / focuses the prompt, Ctrl+Enter sends, Esc stops a
// running command's turn, and ? opens the list of shortcuts (Esc closes
// it).
func TestBrowserKeyboardShortcuts(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	repo := t.TempDir()
	e := start(t, []llmtest.Turn{
		llmtest.Reply("hello by keyboard"),
		llmtest.Calls(llmtest.Call{ID: "slow", Name: "bash", Args: `{"command":"sleep 60 # harness-web-keys-test"}`}),
	}, "bypass")
	blur := void(chromedp.Evaluate[bool](`document.activeElement.blur(), true`))
	run(t, ctx, "open the page and add the workspace",
		chromedp.Navigate(e.srv.URL()),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`)),
		chromedp.SetValue(chromedp.ID(`workspace-path`), repo),
		chromedp.Click(chromedp.CSS(`#add-workspace button`)),
		chromedp.WaitReady(chromedp.CSS(`#workspaces li.selected`)),
	)
	run(t, ctx, "n: a new session", blur, chromedp.KeyEvent("n"), chromedp.WaitVisible(chromedp.ID(`view-session`)))
	run(t, ctx, "/: focus the prompt", blur, chromedp.KeyEvent("/"))
	if id := get(t, ctx, "the focused element", chromedp.Evaluate[string](`document.activeElement.id`)); id != "prompt" {
		t.Fatalf("after /, the focus is on %q, want the prompt", id)
	}
	run(t, ctx, "Ctrl+Enter: send",
		chromedp.KeyEvent("say hello"),
		chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		chromedp.WaitVisible(chromedp.CSS(`.done-note[data-result="stop"]`)),
	)
	if text := get(t, ctx, "the answer", chromedp.Text(chromedp.CSS(`.msg.assistant`))); text != "hello by keyboard" {
		t.Fatalf("the answer is %q", text)
	}
	run(t, ctx, "Esc: stop a running command",
		chromedp.SendKeys(chromedp.ID(`prompt`), "run something slow"),
		chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		chromedp.WaitVisible(chromedp.CSS(`.tool.running`)),
		chromedp.WaitEnabled(chromedp.ID(`stop`)),
		blur,
		chromedp.KeyEvent(kb.Escape),
		void(chromedp.Poll[bool](`document.getElementById("stop").disabled && document.querySelectorAll(".done-note[data-result]").length === 2`, chromedp.WithPollingTimeout(patience))),
	)
	if r := get(t, ctx, "how the second turn ended", chromedp.Evaluate[string](`document.querySelectorAll(".done-note[data-result]")[1].dataset.result`)); r == "stop" {
		t.Fatalf("the turn Esc should have stopped ended with %q", r)
	}
	run(t, ctx, "?: the shortcuts", blur, chromedp.KeyEvent("?"), chromedp.WaitVisible(chromedp.ID(`shortcuts-dialog`)))
	help := get(t, ctx, "the shortcuts' text", chromedp.Text(chromedp.ID(`shortcuts-dialog`)))
	for _, want := range []string{"Ctrl+Enter", "stop the running turn", "new session", "focus the prompt"} {
		if !strings.Contains(help, want) {
			t.Errorf("the shortcuts dialog lacks %q:\n%s", want, help)
		}
	}
	run(t, ctx, "Esc closes it", chromedp.KeyEvent(kb.Escape), chromedp.WaitNotVisible(chromedp.ID(`shortcuts-dialog`)))
}

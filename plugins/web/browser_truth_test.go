package web_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// TestBrowserFailedBashCards: a bash call its own deadline stops and one
// that exits 3 return values (not errors) to the model; their cards are
// failures with the reason, live and when the session is opened again
// from its log, drawn from the calls' presentations (the title is the
// command although the page decodes no arguments).
func TestBrowserFailedBashCards(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	e := startWith(t, []llmtest.Turn{
		llmtest.Calls(llmtest.Call{ID: "slow", Name: "bash", Args: `{"command":"sleep 30","description":"wait","timeoutMs":300}`}),
		llmtest.Calls(llmtest.Call{ID: "exit3", Name: "bash", Args: `{"command":"echo partial; exit 3"}`}),
		llmtest.Reply("both failed"),
	}, func(modelURL, state string) string {
		// Idle sessions close: the reopened session is drawn from its log.
		return testManifest(modelURL, state, "bypass", "    config: {idleClose: 300ms}\n")
	})
	repo := t.TempDir()
	run(t, ctx, "open the page, add the workspace, start a session",
		chromedp.Navigate(e.srv.URL()),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`), chromedp.RetryInterval(2*time.Millisecond)),
		chromedp.SendKeys(chromedp.ID(`workspace-path`), repo),
		chromedp.Click(chromedp.CSS(`#add-workspace button`)),
		chromedp.WaitVisible(chromedp.CSS(`#workspaces li.selected`)),
		chromedp.Click(chromedp.ID(`new-session`)),
		chromedp.WaitVisible(chromedp.CSS(`#sessions li.selected`)),
	)
	run(t, ctx, "run the turn",
		chromedp.SendKeys(chromedp.ID(`prompt`), "run them"),
		chromedp.Click(chromedp.ID(`send`)),
		chromedp.WaitVisible(chromedp.CSS(`.done-note[data-result="stop"]`)),
	)
	check := func(when string) {
		t.Helper()
		for id, want := range map[string][2]string{
			"slow":  {"bash sleep 30", "✗ failed: timed out after 300ms"},
			"exit3": {"bash echo partial; exit 3", "✗ failed: exit code 3"},
		} {
			sel := `.tool[data-call="` + id + `"]`
			head := get(t, ctx, when+": the head of "+id, chromedp.Text(chromedp.CSS(sel+` > .head`)))
			status := get(t, ctx, when+": the status of "+id, chromedp.Text(chromedp.CSS(sel+` > .status`)))
			failed := get(t, ctx, when+": the class of "+id, chromedp.Evaluate[bool](`document.querySelector('`+sel+`').classList.contains("error")`))
			if head != want[0] || status != want[1] || !failed {
				t.Errorf("%s: card %s: head %q, status %q, error class %v; want %q, %q", when, id, head, status, failed, want[0], want[1])
			}
		}
		if ok := get(t, ctx, when+": success marks", chromedp.Evaluate[int](`document.querySelectorAll(".tool.ok, .tool > .status.ok").length`)); ok != 0 {
			t.Errorf("%s: %d cards marked as successes", when, ok)
		}
	}
	check("live")
	run(t, ctx, "reload, let the session close, open it again",
		chromedp.Reload(),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#sessions li`)),
		chromedp.Sleep(time.Second),
		chromedp.Click(chromedp.CSS(`#sessions li`)),
		chromedp.WaitVisible(chromedp.CSS(`.tool[data-call="exit3"] > .status`)),
	)
	check("replayed")
	if out := get(t, ctx, "the output of exit3", chromedp.Text(chromedp.CSS(`.tool[data-call="exit3"] .result`))); !strings.Contains(out, "partial") {
		t.Errorf("exit3's output %q", out)
	}
}

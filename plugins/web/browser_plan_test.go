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

// TestBrowserApprovesAPlan drives the page in headless Chromium with the
// permission mode plan: the model's exit_plan_mode shows a card with the
// plan and the plan question's own buttons; "auto-accept edits" approves
// it, and the write of the next step runs without a second question.
func TestBrowserApprovesAPlan(t *testing.T) {
	t.Parallel()
	ctx := browser(t)
	repo := t.TempDir()
	target := filepath.Join(repo, "notes.txt")
	plan, _ := json.Marshal(map[string]string{"plan": "# Write notes\n\n1. Create notes.txt with one line."})
	args, _ := json.Marshal(map[string]string{"file_path": target, "content": "planned notes\n"})
	e := startWith(t, []llmtest.Turn{
		llmtest.Calls(llmtest.Call{ID: "call-1", Name: "exit_plan_mode", Args: string(plan)}).WithReasoning("A plan first."),
		llmtest.Calls(llmtest.Call{ID: "call-2", Name: "write", Args: string(args)}).WithReasoning("Approved."),
		llmtest.Reply("I wrote notes.txt as planned."),
	}, func(modelURL, state string) string {
		return testManifest(modelURL, state, "plan", "  - name: plan-mode\n")
	})
	run(t, ctx, "open the page with the token",
		chromedp.Navigate(e.srv.URL()),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`)))
	run(t, ctx, "add the workspace and start a session",
		chromedp.SendKeys(chromedp.ID(`workspace-path`), repo),
		chromedp.Click(chromedp.CSS(`#add-workspace button`)),
		chromedp.WaitVisible(chromedp.CSS(`#workspaces li.selected`)),
		chromedp.Click(chromedp.ID(`new-session`)),
		chromedp.WaitVisible(chromedp.ID(`view-session`)),
	)
	run(t, ctx, "send the prompt and wait for the plan",
		chromedp.SendKeys(chromedp.ID(`prompt`), "plan some notes"),
		chromedp.Click(chromedp.ID(`send`)),
		chromedp.WaitVisible(chromedp.CSS(`.approval .allow-always`)),
	)
	card := get(t, ctx, "read the plan card", chromedp.Text(chromedp.CSS(`.approval`)))
	for _, want := range []string{"Approve this plan?", "Create notes.txt with one line.", "Yes, and auto-accept edits", "No, keep planning"} {
		if !strings.Contains(card, want) {
			t.Errorf("the plan card lacks %q:\n%s", want, card)
		}
	}
	run(t, ctx, "screenshot", shot(t, "web-plan"))
	run(t, ctx, "approve with auto-accept edits and wait for the answer",
		chromedp.Click(chromedp.CSS(`.approval .allow-always`)),
		chromedp.WaitVisible(chromedp.CSS(`.done-note[data-result="stop"]`)),
	)
	if b, err := os.ReadFile(target); err != nil || string(b) != "planned notes\n" {
		t.Fatalf("notes.txt after the approved plan: %q %v", b, err)
	}
	if n := get(t, ctx, "open approvals", chromedp.Evaluate[int](`document.querySelectorAll(".approval button:not([disabled])").length`)); n != 0 {
		t.Errorf("%d approval buttons still open: the write after the plan asked", n)
	}
}

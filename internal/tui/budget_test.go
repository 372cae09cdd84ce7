package tui_test

import (
	"strings"
	"testing"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// TestBudgetWarningOnTheStatusBar: a session capped at 6000 tokens whose
// first reply reports 5010 shows the 80% warning in the transcript and
// on the status bar; the next prompt's call would pass the cap: it is not
// sent, and the bar says the budget is exceeded.
func TestBudgetWarningOnTheStatusBar(t *testing.T) {
	t.Parallel()
	u5010 := llmtest.Usage{PromptTokens: 5000, CompletionTokens: 10, TotalTokens: 5010}
	u := startWith(t, setup{mode: "bypass", turns: []llmtest.Turn{llmtest.Reply("first answer").WithUsage(u5010), llmtest.Reply("never sent")},
		w: 140, h: 30, noColor: true, budget: agent.Budget{MaxTokens: 6000}})
	scr := u.submit("first", "first answer", "budget 83% used: 5010 of 6000 tokens (maxTokens)")
	if status := lastLine(scr); !strings.Contains(status, "⚠ budget 83% tokens") {
		t.Errorf("the status bar lacks the warning: %q", status)
	}
	scr = u.submit("second", "budget exceeded: the next model call would bring the session to", "turn ended (budget)")
	if status := lastLine(scr); !strings.Contains(status, "⚠ budget exceeded (tokens)") {
		t.Errorf("the status bar lacks the stop: %q", status)
	}
	if n := len(u.srv.Requests()); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}

func lastLine(scr string) string {
	lines := strings.Split(strings.TrimRight(scr, "\n"), "\n")
	return lines[len(lines)-1]
}

package tui_test

import (
	"regexp"
	"testing"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// TestStatusBarContextAgreesWithSlashContext: when the session is idle, the
// status bar's ctx figure and /context's percentage are the same number,
// with a provider that reports usage and with one that does not (issue 36,
// item 2: they read 8.6% and 14.7% in the same idle state).
func TestStatusBarContextAgreesWithSlashContext(t *testing.T) {
	t.Parallel()
	big := `{"command":"seq 1 4000"}`
	for name, turns := range map[string][]llmtest.Turn{
		"reported":  {llmtest.Reply("ok").WithUsage(llmtest.Usage{PromptTokens: 3000, CompletionTokens: 20, TotalTokens: 3020})},
		"estimated": {llmtest.Reply("ok")},
		"tool call reported": {
			llmtest.Calls(llmtest.Call{ID: "c1", Name: "bash", Args: big}).WithUsage(llmtest.Usage{PromptTokens: 3000, CompletionTokens: 20, TotalTokens: 3020}),
			llmtest.Reply("ok").WithUsage(llmtest.Usage{PromptTokens: 9000, CompletionTokens: 5, TotalTokens: 9005}),
		},
		"tool call estimated": {llmtest.Calls(llmtest.Call{ID: "c1", Name: "bash", Args: big}), llmtest.Reply("ok")},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			u := start(t, "bypass", turns, 140, 40)
			scr := u.submit("hello there, how much context is this", "ok", "last turn")
			bar := regexp.MustCompile(`ctx ([0-9.]+)%`).FindStringSubmatch(scr)
			if bar == nil {
				t.Fatalf("no ctx figure in the status bar:\n%s", scr)
			}
			scr = u.submit("/context", "context in use:", "source:")
			cmd := regexp.MustCompile(`of 100000 \(([0-9.]+)%\)`).FindStringSubmatch(scr)
			if cmd == nil {
				t.Fatalf("no percentage in /context:\n%s", scr)
			}
			if bar[1] != cmd[1] {
				t.Errorf("status bar says ctx %s%%, /context says %s%%", bar[1], cmd[1])
			}
		})
	}
}

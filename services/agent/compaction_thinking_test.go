package agent_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/compaction"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// stepReasoning is the reasoning the scripted model streams before the
// tool calls of step i (their first call is a<i>).
func stepReasoning(i int) string { return fmt.Sprintf("step %d: read big.txt twice more", i) }

// thinkingSteps scripts steps from..to-1 in DeepSeek thinking mode (two
// parallel read_file calls a<i>, b<i> each, reasoning_content streamed
// first), then the answer text with its own reasoning.
func thinkingSteps(from, to int, text string) []llmtest.Turn {
	var turns []llmtest.Turn
	for i := from; i < to; i++ {
		turns = append(turns, llmtest.Calls(
			llmtest.Call{ID: fmt.Sprintf("a%d", i), Name: "read_file", Args: `{"path":"big.txt"}`},
			llmtest.Call{ID: fmt.Sprintf("b%d", i), Name: "read_file", Args: `{"path":"big.txt"}`},
		).WithReasoning(stepReasoning(i)))
	}
	return append(turns, llmtest.Reply(text).WithReasoning("answering "+text))
}

// reasoningCheck records the requests DeepSeek would refuse: it runs
// llmtest.DeepSeekReasoningCheck on every request (and answers its HTTP 400
// like DeepSeek), and, stricter than DeepSeek, requires each assistant
// message with tool calls to carry back the reasoning that step streamed,
// thinking mode to be on, and no reasoning to leak into a summary.
type reasoningCheck struct {
	mu       sync.Mutex
	problems []string
	checked  int
}

func (rc *reasoningCheck) check(r llmtest.Request, w llmtest.WireRequest) *llmtest.Turn {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.checked++
	n := rc.checked
	if w.Thinking == nil || w.Thinking.Type != "enabled" {
		rc.problems = append(rc.problems, fmt.Sprintf("request %d: thinking %+v, want enabled", n, w.Thinking))
	}
	if t := llmtest.DeepSeekReasoningCheck(r, w); t != nil {
		rc.problems = append(rc.problems, fmt.Sprintf("request %d refused like DeepSeek: %s", n, t.ErrorBody))
		return t
	}
	for i, m := range w.Messages {
		if strings.Contains(m.Text(), "answering") || strings.Contains(m.Text(), "read big.txt twice more") || strings.Contains(m.Text(), "weighing what to keep") {
			rc.problems = append(rc.problems, fmt.Sprintf("request %d message %d: reasoning leaked into content: %.80q", n, i, m.Text()))
		}
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			continue
		}
		var step int
		if _, err := fmt.Sscanf(m.ToolCalls[0].ID, "a%d", &step); err != nil {
			rc.problems = append(rc.problems, fmt.Sprintf("request %d message %d: unexpected call id %q", n, i, m.ToolCalls[0].ID))
			continue
		}
		if want := stepReasoning(step); *m.ReasoningContent != want {
			rc.problems = append(rc.problems, fmt.Sprintf("request %d message %d (call %s): reasoning_content %q, want %q", n, i, m.ToolCalls[0].ID, *m.ReasoningContent, want))
		}
	}
	return nil
}

// The compaction end-to-end run in DeepSeek thinking mode: every request,
// the summary requests included, passes DeepSeek's reasoning_content check,
// and the kept assistant turns carry their own reasoning back — across
// several compactions, after a resume from the log, and after a manual
// compaction of the resumed session.
func TestCompactionThinkingModeKeepsReasoning(t *testing.T) {
	t.Parallel()
	cs := &compactionServer{reasoning: "weighing what to keep in the summary"}
	rc := &reasoningCheck{}
	turns := append(thinkingSteps(0, 30, "all done"), thinkingSteps(30, 36, "resumed fine")...)
	turns = append(turns, thinkingSteps(36, 38, "still fine")...)
	f := newCompactionFixtureMode(t, turns, cs, nil, llm.ThinkingEnabled, rc.check)
	f.write("big.txt", strings.Repeat("line of a big file\n", 40))
	compactions := 0
	ss := f.open(agent.Options{Observer: func(e agent.Event) {
		if e.Type == agent.EventCompaction {
			compactions++
		}
	}})
	res, err := ss.Run(context.Background(), "read big.txt thirty times")
	if err != nil || res.Text != "all done" {
		t.Fatalf("run: %v %+v; problems:\n%s", err, res, strings.Join(rc.problems, "\n"))
	}
	if compactions < 2 || cs.summaries != compactions {
		t.Fatalf("compactions %d, summaries %d", compactions, cs.summaries)
	}
	// The compacted view keeps reasoning on the kept assistant turns.
	kept := 0
	for _, m := range ss.History() {
		if m.Role == llm.RoleAssistant && len(m.ToolCalls) > 0 {
			kept++
			if m.Reasoning == "" {
				t.Errorf("kept assistant turn %s lost its reasoning", m.ToolCalls[0].ID)
			}
		}
	}
	if kept == 0 {
		t.Fatal("no assistant turn with tool calls was kept: the check proves nothing")
	}
	id := ss.ID()
	if err := ss.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	// Resume from the log, go on, then compact by hand and go on again.
	ss2 := f.open(agent.Options{ID: id})
	before := len(f.srv.Requests())
	if res, err := ss2.Run(context.Background(), "and now?"); err != nil || res.Text != "resumed fine" {
		t.Fatalf("after resume: %v %+v; problems:\n%s", err, res, strings.Join(rc.problems, "\n"))
	}
	w := f.wire(before) // the first request after the resume
	if !strings.HasPrefix(w.Messages[1].Text(), compaction.SummaryPrefix) {
		t.Fatalf("the resumed request does not start with the summary: %s", w.History())
	}
	carried := 0
	for _, m := range w.Messages {
		if m.Role == "assistant" && len(m.ToolCalls) > 0 {
			carried++
		}
	}
	if carried == 0 {
		t.Fatalf("the resumed request carries no assistant turn with tool calls: %s", w.History())
	}
	if _, err := ss2.Compact(context.Background(), "keep the file names"); err != nil {
		t.Fatalf("manual compaction after resume: %v", err)
	}
	if res, err := ss2.Run(context.Background(), "still there?"); err != nil || res.Text != "still fine" {
		t.Fatalf("after the manual compaction: %v %+v", err, res)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.problems) > 0 || len(cs.problems) > 0 || cs.refused > 0 {
		t.Fatalf("refused %d; problems:\n%s\n%s", cs.refused, strings.Join(rc.problems, "\n"), strings.Join(cs.problems, "\n"))
	}
	if rc.checked != len(f.srv.Requests()) {
		t.Fatalf("checked %d of %d requests", rc.checked, len(f.srv.Requests()))
	}
}

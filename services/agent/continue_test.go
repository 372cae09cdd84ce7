package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// A turn cut short in a tool (the process stopped) is continued from the
// stored session under a fixed id: no new prompt, the finished call is
// not run again, the cut one reads as aborted, and the model's answer
// ends the same turn.
func TestContinueResumesACutShortTurn(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []llmtest.Turn{
		llmtest.Stream(llmtest.ToolCallStart(0, "c1", "read_file", `{"path":"a.txt"}`),
			llmtest.ToolCallStart(1, "c2", "slow", `{"seconds":60}`), llmtest.Finish("tool_calls")),
		llmtest.Stream(llmtest.TextDelta("all done"), llmtest.Finish("stop")),
	})
	f.write("a.txt", "alpha")
	ctx, cancel := context.WithCancel(context.Background())
	ss, err := f.svc.Open(ctx, agent.Options{NewID: "job-1-x", Origin: "job", Observer: func(e agent.Event) {
		if e.Type == agent.EventToolResult && e.ToolResult.CallID == "c1" {
			cancel()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ss.Run(ctx, "do it"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cut-short run: %v", err)
	}
	_ = ss.Close(context.Background())
	again := f.open(agent.Options{ID: "job-1-x"})
	res, err := again.Continue(context.Background())
	if err != nil || res.Text != "all done" || res.Steps != 1 {
		t.Fatalf("Continue: %+v %v", res, err)
	}
	w := f.wire(1)
	var roles []string
	for _, m := range w.Messages {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, ","); got != "system,user,assistant,tool,tool" {
		t.Fatalf("resumed request roles %s", got)
	}
	if w.Messages[3].Text() != "alpha" || !strings.Contains(w.Messages[4].Text(), "abort") {
		t.Fatalf("tool results: %q %q", w.Messages[3].Text(), w.Messages[4].Text())
	}
	recs, err := agent.ReadSession(context.Background(), f.svc.Sessions(), "job-1-x")
	if err != nil {
		t.Fatal(err)
	}
	users, results := 0, 0
	for _, r := range recs {
		if r.Type == agent.RecordUser && r.Source == "" {
			users++
		}
		if r.Type == agent.RecordToolResult && r.CallID == "c1" {
			results++
		}
	}
	if users != 1 || results != 1 || recs[0].Origin != "job" {
		t.Fatalf("records: %d prompts, %d results of c1, origin %q", users, results, recs[0].Origin)
	}
}

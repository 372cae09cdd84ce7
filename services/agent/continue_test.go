package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/sessions"
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

// A session whose process died while a tool ran (an assistant record with
// a tool call, no result) is continued: the model is given an interrupted
// result for the call, and that result is stored in the session, before
// the answer, so the log says what the model saw.
func TestContinueStoresTheInterruptedResult(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []llmtest.Turn{llmtest.Stream(llmtest.TextDelta("all done"), llmtest.Finish("stop"))})
	ctx := context.Background()
	w, err := f.svc.Sessions().Create(ctx, sessions.Header{ID: "job-2-x", Cwd: f.dir, Model: "test/m1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []agent.Record{
		{Type: agent.RecordUser, Turn: 1, Message: &llm.Message{Role: llm.RoleUser, Content: "do it"}},
		{Type: agent.RecordAssistant, Turn: 1, Step: 1, Message: &llm.Message{Role: llm.RoleAssistant,
			ToolCalls: []llm.ToolCall{{ID: "c9", Name: "slow", Arguments: `{"seconds":60}`}}}},
	} {
		e, err := r.Entry()
		if err == nil {
			_, err = w.Append(ctx, e)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	_ = w.Close()
	res, err := f.open(agent.Options{ID: "job-2-x"}).Continue(ctx)
	if err != nil || res.Text != "all done" {
		t.Fatalf("Continue: %+v %v", res, err)
	}
	sent := f.wire(0).Messages
	if last := sent[len(sent)-1]; last.Role != "tool" || !strings.Contains(last.Text(), "interrupted") {
		t.Fatalf("the model was given %s %q", last.Role, last.Text())
	}
	recs, err := agent.ReadSession(ctx, f.svc.Sessions(), "job-2-x")
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, r := range recs {
		if r.Type == agent.RecordToolResult {
			if r.CallID != "c9" || !r.IsError || r.Message == nil || r.Message.Content != sent[len(sent)-1].Text() || r.Error == nil || r.Error.Code != "INTERRUPTED" {
				t.Errorf("stored result: %+v", r)
			}
		}
		if r.Message != nil {
			types = append(types, r.Type)
		}
	}
	if got := strings.Join(types, ","); got != "user,assistant,tool/result,assistant" {
		t.Fatalf("stored messages: %s", got)
	}
}

package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/tools"
)

// budgetEvents collects a session's budget events.
type budgetEvents struct{ got []agent.BudgetInfo }

func (b *budgetEvents) observe(e agent.Event) {
	if e.Type == agent.EventBudget {
		b.got = append(b.got, *e.Budget)
	}
}

// A session capped at 1000 tokens whose model reports 300 prompt and 10
// completion tokens per call: the first three calls are sent (the third
// one's projection passes 80%: the warning), the fourth would pass the
// cap and is never sent; the turn ends with reason budget and ErrBudget.
func TestBudgetStopsBeforeTheCallThatWouldExceed(t *testing.T) {
	u := llmtest.Usage{PromptTokens: 300, CompletionTokens: 10, TotalTokens: 310}
	step := func(id string) llmtest.Turn {
		return llmtest.Calls(llmtest.Call{ID: id, Name: "current_time", Args: `{}`}).WithUsage(u)
	}
	f := newFixture(t, []llmtest.Turn{step("c1"), step("c2"), step("c3"), llmtest.Reply("never sent").WithUsage(u)})
	var ev budgetEvents
	ss := f.open(agent.Options{Budget: agent.Budget{MaxTokens: 1000}, Observer: ev.observe})
	res, err := ss.Run(context.Background(), "what time is it")
	if !errors.Is(err, agent.ErrBudget) {
		t.Fatalf("err = %v, want ErrBudget", err)
	}
	if n := len(f.srv.Requests()); n != 3 {
		t.Fatalf("the model saw %d requests, want 3 (the fourth would pass the cap)", n)
	}
	if res.Reason != "budget" || !res.IsError || res.Steps != 3 || !strings.Contains(res.Error, "maxTokens 1000") {
		t.Fatalf("result = %+v", res)
	}
	if len(ev.got) != 2 {
		t.Fatalf("budget events = %+v, want the warning then the stop", ev.got)
	}
	warn, stop := ev.got[0], ev.got[1]
	if warn.Kind != agent.BudgetTokens || warn.Exceeded || warn.Projected < 800 || warn.Projected > 1000 || warn.Limit != 1000 {
		t.Errorf("warning = %+v", warn)
	}
	if stop.Kind != agent.BudgetTokens || !stop.Exceeded || stop.Used != 930 || stop.Projected <= 1000 {
		t.Errorf("stop = %+v", stop)
	}
	t.Logf("warning %+v; stop %+v; %s", warn, stop, res.Error)

	// The session stays resumable: the same cap refuses the next turn
	// at once, without a request.
	res, err = ss.Run(context.Background(), "again")
	if !errors.Is(err, agent.ErrBudget) || res.Steps != 0 || len(f.srv.Requests()) != 3 {
		t.Fatalf("second turn: %v %+v, %d requests", err, res, len(f.srv.Requests()))
	}
}

// A resumed session counts what its log recorded: a cap below the spend
// stored by an earlier process refuses the first call.
func TestBudgetCountsTheStoredSpendOfAResumedSession(t *testing.T) {
	u := llmtest.Usage{PromptTokens: 500, CompletionTokens: 20, TotalTokens: 520}
	f := newFixture(t, []llmtest.Turn{llmtest.Reply("first").WithUsage(u), llmtest.Reply("second").WithUsage(u)})
	ss, err := f.svc.Open(context.Background(), agent.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ss.Run(context.Background(), "one"); err != nil {
		t.Fatal(err)
	}
	id := ss.ID()
	if err := ss.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	again := f.open(agent.Options{ID: id, Budget: agent.Budget{MaxTokens: 600}})
	res, err := again.Run(context.Background(), "two")
	if !errors.Is(err, agent.ErrBudget) || res.Reason != "budget" {
		t.Fatalf("resumed turn: %v %+v", err, res)
	}
	if n := len(f.srv.Requests()); n != 1 {
		t.Fatalf("the model saw %d requests, want 1", n)
	}
}

// A cost cap on a route without prices is refused when the session opens.
func TestCostBudgetNeedsPrices(t *testing.T) {
	f := newFixture(t, nil)
	_, err := f.svc.Open(context.Background(), agent.Options{Budget: agent.Budget{MaxCostUSD: 1}})
	if !errors.Is(err, agent.ErrBudgetUnpriced) || !strings.Contains(err.Error(), "test/m1") {
		t.Fatalf("open: %v, want ErrBudgetUnpriced naming test/m1", err)
	}
}

// A subagent's usage, rolled up by its tool (agent.AddChildUsage, as the
// subagent tools do when a child returns), counts toward the parent's
// budget: the call after it is not sent.
func TestBudgetCountsSubagentUsage(t *testing.T) {
	u := llmtest.Usage{PromptTokens: 300, CompletionTokens: 10, TotalTokens: 310}
	f := newFixture(t, []llmtest.Turn{llmtest.Calls(llmtest.Call{ID: "c1", Name: "child", Args: `{}`}).WithUsage(u), llmtest.Reply("never sent")})
	ss := f.open(agent.Options{Budget: agent.Budget{MaxTokens: 6000}})
	child := tools.Define("child", "Run a child.", func(ctx context.Context, e *tools.Execution, _ struct{}) (string, error) {
		agent.AddChildUsage(ctx, llm.Usage{PromptTokens: 5800, CompletionTokens: 100, TotalTokens: 5900})
		return "the child's answer", nil
	})
	if err := tools.Register(ss.Context(), child); err != nil {
		t.Fatal(err)
	}
	res, err := ss.Run(context.Background(), "delegate")
	if !errors.Is(err, agent.ErrBudget) || res.Reason != "budget" {
		t.Fatalf("turn: %v %+v", err, res)
	}
	if n := len(f.srv.Requests()); n != 1 {
		t.Fatalf("the model saw %d requests, want 1", n)
	}
	if res.SubagentUsage == nil || res.SubagentUsage.PromptTokens != 5800 {
		t.Fatalf("subagent usage %+v", res.SubagentUsage)
	}
}

package tools_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/tools"
)

// slowApprover answers "allowed once" after a person's wait.
type slowApprover struct{ wait time.Duration }

func (a slowApprover) Ask(ctx context.Context, _ tools.ApprovalRequest) (tools.ApprovalOutcome, error) {
	select {
	case <-time.After(a.wait):
		return tools.ApprovalAllowedOnce, nil
	case <-ctx.Done():
		return tools.ApprovalCancelled, nil
	}
}

// TestElapsedLeavesOutTheApprovalWait: a call's Elapsed (the duration its
// card and result show) does not include the time a person took to answer
// the approval question (issue 36 item 4: an edit card's time did), while
// its body's own time still counts.
func TestElapsedLeavesOutTheApprovalWait(t *testing.T) {
	t.Parallel()
	const wait, body = 1500 * time.Millisecond, 200 * time.Millisecond
	e := newEnv(t)
	var calls atomic.Int64
	e.register(tools.Define("slow", "sleeps", func(ctx context.Context, _ *tools.Execution, _ struct{}) (string, error) {
		calls.Add(1)
		time.Sleep(body)
		return "done", nil
	}))
	e.provideApprover(slowApprover{wait: wait})
	e.on(core.On(e.c, tools.PreExecute, func(context.Context, *tools.Execution, core.Next[*tools.Execution, tools.Decision]) (tools.Decision, error) {
		return tools.Ask("asks a person"), nil
	}))
	outs := tools.Scheduler{Registry: e.reg}.Run(context.Background(), []tools.Call{{ID: "1", Name: "slow", Arguments: `{}`}})
	if text(outs[0]) != "done" || calls.Load() != 1 {
		t.Fatalf("the call did not run: %q", text(outs[0]))
	}
	if got := outs[0].Elapsed; got < body || got >= wait {
		t.Errorf("Elapsed %v: want the body's %v and not the person's %v", got, body, wait)
	}
}

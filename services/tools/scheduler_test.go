package tools_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/dshgo/harness/services/tools"
)

type sleepArgs struct {
	ID        string `json:"id"`
	Ms        int    `json:"ms"`
	Exclusive bool   `json:"exclusive,omitempty"`
}

// journal records body starts and ends and the peak overlap.
type journal struct {
	mu       sync.Mutex
	events   []string
	inflight int
	peak     int
}

func (j *journal) log(s string, delta int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.events = append(j.events, s)
	j.inflight += delta
	j.peak = max(j.peak, j.inflight)
}

func sleepTool(j *journal) *tools.Tool {
	return tools.Define("sleep", "sleeps", func(ctx context.Context, _ *tools.Execution, a sleepArgs) (string, error) {
		j.log("start "+a.ID, 1)
		select {
		case <-time.After(time.Duration(a.Ms) * time.Millisecond):
		case <-ctx.Done():
		}
		j.log("end "+a.ID, -1)
		return "done " + a.ID, nil
	}, tools.WithConcurrencySafe(func(a sleepArgs) bool { return !a.Exclusive }))
}

func sleepCall(id string, ms int, exclusive bool) tools.Call {
	return tools.Call{ID: id, Name: "sleep", Arguments: fmt.Sprintf(`{"id":%q,"ms":%d,"exclusive":%v}`, id, ms, exclusive)}
}

func TestSchedulerOverlapsParallelBodiesAndKeepsModelOrder(t *testing.T) {
	// Serial: it bounds the wall time of the overlapped bodies.
	e := newEnv(t)
	j := &journal{}
	e.register(sleepTool(j))
	var policy []string
	e.on(tools.OnPreExecute(e.c, func(_ context.Context, x *tools.Execution) (tools.Decision, error) {
		policy = append(policy, x.CallID()) // the scheduling goroutine only
		return tools.Allow(), nil
	}))
	var calls []tools.Call
	for i := range 5 {
		calls = append(calls, sleepCall(fmt.Sprint(i), 100-i*15, false)) // later calls finish first
	}
	var order []int
	start := time.Now()
	outs := tools.Scheduler{Registry: e.reg, Limit: 3, OnResult: func(i int, _ *tools.Outcome) { order = append(order, i) }}.Run(context.Background(), calls)
	elapsed := time.Since(start)
	t.Logf("5 bodies of 40-100 ms, limit 3: %v (serial would be ~350ms)", elapsed)
	for i, o := range outs {
		if text(o) != fmt.Sprintf("done %d", i) {
			t.Errorf("outcome %d: %q", i, text(o))
		}
	}
	if fmt.Sprint(order) != "[0 1 2 3 4]" || fmt.Sprint(policy) != "[0 1 2 3 4]" {
		t.Errorf("results %v policy %v, want model order", order, policy)
	}
	if j.peak != 3 {
		t.Errorf("peak overlap %d, want the limit 3", j.peak)
	}
	if elapsed > 330*time.Millisecond { // generous sanity bound: overlapped, not serial
		t.Errorf("took %v", elapsed)
	}
}

func TestSchedulerRunsExclusiveCallsAlone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	j := &journal{}
	e.register(sleepTool(j))
	calls := []tools.Call{sleepCall("p1", 60, false), sleepCall("p2", 30, false), sleepCall("x", 10, true), sleepCall("p3", 10, false)}
	if m := e.reg.ExecutionMode(calls[2]); m != tools.Exclusive {
		t.Errorf("mode %v", m)
	}
	if m := e.reg.ExecutionMode(calls[0]); m != tools.Parallel {
		t.Errorf("mode %v", m)
	}
	tools.Scheduler{Registry: e.reg}.Run(context.Background(), calls)
	// x waits for both p1 and p2 (in whatever order they ran); p3 waits for x.
	first := append([]string(nil), j.events[:min(4, len(j.events))]...)
	sort.Strings(first)
	if len(j.events) != 8 || fmt.Sprint(first) != "[end p1 end p2 start p1 start p2]" ||
		fmt.Sprint(j.events[4:]) != "[start x end x start p3 end p3]" {
		t.Errorf("events %v", j.events)
	}
}

func TestExecutionModeFailsClosed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.register(echoTool(nil), sleepTool(&journal{}),
		tools.Define("panicky", "x", func(context.Context, *tools.Execution, sleepArgs) (string, error) { return "", nil },
			tools.WithConcurrencySafe(func(sleepArgs) bool { panic("classifier") })))
	for _, c := range []tools.Call{
		{Name: "echo", Arguments: `{"text":"x"}`}, // no classifier
		{Name: "nosuch"},                       // unknown
		{Name: "sleep", Arguments: `{"id":1}`}, // invalid arguments
		{Name: "panicky", Arguments: `{"id":"a","ms":1}`},
	} {
		if m := e.reg.ExecutionMode(c); m != tools.Exclusive {
			t.Errorf("%s %s: %v", c.Name, c.Arguments, m)
		}
	}
}

func TestSchedulerCancellationDrainsStartedBodies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	j := &journal{}
	e.register(sleepTool(j))
	ctx, cancel := context.WithCancel(context.Background())
	e.on(tools.OnPreExecute(e.c, func(_ context.Context, x *tools.Execution) (tools.Decision, error) {
		if x.CallID() == "x" {
			// The user hits Ctrl-C while policy for the third call runs, once
			// both parallel bodies have started.
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				j.mu.Lock()
				n := len(j.events)
				j.mu.Unlock()
				if n == 2 {
					break
				}
			}
			cancel()
		}
		return tools.Allow(), nil
	}))
	calls := []tools.Call{sleepCall("a", 5000, false), sleepCall("b", 5000, false), sleepCall("x", 1, true), sleepCall("c", 1, false)}
	outs := tools.Scheduler{Registry: e.reg}.Run(ctx, calls)
	want := []string{tools.CodeAborted, tools.CodeAborted, tools.CodeAbortedBeforeDispatch, tools.CodeAbortedBeforeDispatch}
	for i, o := range outs {
		if code(o) != want[i] {
			t.Errorf("call %d: %q", i, text(o))
		}
	}
	if len(j.events) != 4 || j.events[2][:3] != "end" || j.events[3][:3] != "end" {
		t.Errorf("events %v", j.events)
	}
}

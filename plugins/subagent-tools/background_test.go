package subagenttools_test

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/tools"
)

var bgID = regexp.MustCompile(`Agent (\S+) is running in the background`)

// Two background children: the model interrupts the slow one with
// interrupt_agent; each settles with one notice to the parent, carrying its
// final content (or why it stopped), before the parent's next request.
func TestBackgroundChildrenNotifyTheirParentOnceAndCanBeInterrupted(t *testing.T) {
	r := newRouter(map[string][]llmtest.Turn{
		"": {llmtest.Calls(
			call("t1", "task", `{"description":"slow","prompt":"#A sleep","run_in_background":true}`),
			call("t2", "task", `{"description":"quick","prompt":"#B answer","run_in_background":true}`))},
		"#A": {llmtest.Calls(call("s1", "sleep", `{"ms":60000}`))},
		"#B": {llmtest.Reply("bg answer")},
	})
	f := newFixture(t, nil, fixtureOpts{router: r})
	f.probe.started = make(chan string, 1)
	var (
		mu   sync.Mutex // the hook runs on the server's goroutines
		slow string
		step int
	)
	r.hook = func(key string, w llmtest.WireRequest) *llmtest.Turn {
		if key != "" {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		step++
		var turn llmtest.Turn
		switch step {
		case 1:
			return nil
		case 2: // both task results are in; wait for the slow child's tool, then interrupt it
			for _, m := range w.Messages {
				if got := bgID.FindStringSubmatch(m.Text()); got != nil && slow == "" {
					slow = got[1] // the first task call is the slow child
				}
			}
			<-f.probe.started
			turn = llmtest.Calls(call("i1", "interrupt_agent", `{"agent_id":"`+slow+`"}`))
		default:
			turn = llmtest.Reply("ok")
		}
		return &turn
	}
	ss := f.open(agent.Options{Model: "test/m1"})
	if _, err := ss.Run(context.Background(), "start two in the background"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	slowID := slow
	mu.Unlock()
	// Wait for both children to settle, then take one more turn.
	for deadline := time.Now().Add(10 * time.Second); ; {
		list, _ := f.sub.Children(context.Background(), ss.ID())
		running := false
		for _, i := range list {
			running = running || i.Running
		}
		if len(list) == 2 && !running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("children still running: %+v", list)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := ss.Run(context.Background(), "anything new?"); err != nil {
		t.Fatal(err)
	}
	var notices []string
	for _, rec := range f.records(ss.ID()) {
		if rec.Type == agent.RecordUser && strings.HasPrefix(rec.Source, "subagent:") {
			notices = append(notices, rec.Message.Content)
		}
	}
	all := strings.Join(notices, "\n")
	if len(notices) != 2 || !strings.Contains(all, `agent_id="`+slowID+`" status="aborted"`) || !strings.Contains(all, `status="completed">`+"\nbg answer\n") {
		t.Fatalf("notices = %q", notices)
	}
	if got := lastToolResultNamed(f.records(ss.ID()), "interrupt_agent"); got != "Agent "+slowID+" was interrupted." {
		t.Fatalf("interrupt_agent = %q", got)
	}
	var aborted bool
	for _, rec := range f.records(slowID) {
		aborted = aborted || rec.Type == agent.RecordToolResult && rec.Error != nil && rec.Error.Code == tools.CodeAborted
	}
	if !aborted {
		t.Fatalf("the slow child's log has no aborted result: %+v", f.records(slowID))
	}
}

func lastToolResultNamed(recs []agent.Record, name string) string {
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Type == agent.RecordToolResult && recs[i].Name == name && recs[i].Message != nil {
			return recs[i].Message.Content
		}
	}
	return ""
}

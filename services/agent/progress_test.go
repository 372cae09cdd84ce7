package agent_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/tools"
)

// TestToolProgressBecomesEvents: a running call's progress reports become
// tool_progress events between its tool_call and its tool_result, with the
// turn, step and session; a report after the call ended is dropped; the
// events are not logged and stream-json leaves them out.
func TestToolProgressBecomesEvents(t *testing.T) {
	f := newFixture(t, []llmtest.Turn{
		llmtest.Calls(llmtest.Call{ID: "c1", Name: "ticker", Args: `{}`}),
		llmtest.Reply("ticked"),
	})
	var (
		mu     sync.Mutex
		events []agent.Event
		late   *tools.ProgressReporter
	)
	sawOne := make(chan struct{})
	ticker := tools.Define("ticker", "Ticks twice.", func(ctx context.Context, e *tools.Execution, _ struct{}) (string, error) {
		r := tools.ProgressOf(ctx, e)
		if r == nil {
			return "", tools.Errorf("NO_SINK", "the agent gave the call no progress sink")
		}
		r.Report("one\n", 4)
		select { // the observer saw the first report while the call runs
		case <-sawOne:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		for !r.Report("one\ntwo\n", 8) { // the rate limit drops reports less than ProgressInterval apart
			time.Sleep(10 * time.Millisecond)
		}
		mu.Lock()
		late = r
		mu.Unlock()
		return "one\ntwo\n", nil
	})
	fb := f.rc.Plugin(core.Define("progress-tool", func(c *core.Context, _ struct{}) error {
		return tools.Register(c, ticker)
	}, core.WithInject(tools.Key.Name())), nil)
	if err := fb.Await(context.Background()); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	ss := f.open(agent.Options{Observer: func(e agent.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
		if e.Type == agent.EventToolProgress {
			once.Do(func() { close(sawOne) })
		}
	}})
	res, err := ss.Run(context.Background(), "tick")
	if err != nil || res.Text != "ticked" {
		t.Fatalf("run: %v %+v", err, res)
	}
	// A report after the call's result is out never becomes an event.
	for !late.Report("one\ntwo\nlate\n", 13) {
		time.Sleep(10 * time.Millisecond)
	}

	mu.Lock()
	defer mu.Unlock()
	var kinds []string
	var progress []agent.Event
	for _, e := range events {
		kinds = append(kinds, string(e.Type))
		if e.Type == agent.EventToolProgress {
			progress = append(progress, e)
		}
	}
	seq := strings.Join(kinds, " ")
	if !strings.Contains(seq, "tool_call tool_progress tool_progress tool_result") {
		t.Fatalf("events: %s", seq)
	}
	if len(progress) != 2 {
		t.Fatalf("%d progress events: %+v", len(progress), progress)
	}
	for i, want := range []agent.ToolProgressEvent{{CallID: "c1", Name: "ticker", Tail: "one\n", Bytes: 4}, {CallID: "c1", Name: "ticker", Tail: "one\ntwo\n", Bytes: 8}} {
		e := progress[i]
		got := *e.ToolProgress
		pr := got.Presentation
		got.Presentation = nil
		if pr == nil || pr.ToolCallID != "c1" || pr.Status != tools.StatusInProgress || len(pr.Content) != 1 || pr.Content[0].Terminal.Output != want.Tail {
			t.Errorf("progress %d: presentation %+v", i, pr)
		}
		if got != want || e.SessionID != ss.ID() || e.Turn != 1 || e.Step != 1 {
			t.Errorf("progress %d: %+v %+v", i, e, e.ToolProgress)
		}
	}
	b, err := progress[0].MarshalJSON()
	if want := `{"v":1,"type":"tool_progress","sessionId":"` + ss.ID() + `","turn":1,"step":1,"toolProgress":{"callId":"c1","name":"ticker","tail":"one\n","bytes":4,` +
		`"presentation":{"toolCallId":"c1","status":"in_progress","content":[{"type":"terminal","terminalId":"c1","_meta":{"output":"one\n"}}]}}}`; err != nil || string(b) != want {
		t.Errorf("wire form:\n%s\nwant\n%s", b, want)
	}
	var out bytes.Buffer
	enc := agent.NewStreamJSONEncoder(&out)
	for _, e := range events {
		if err := enc.Encode(e); err != nil {
			t.Fatal(err)
		}
	}
	if lines := strings.Count(out.String(), "\n"); bytes.Contains(out.Bytes(), []byte("tool_progress")) || lines != len(events)-2 {
		t.Errorf("stream-json: %d lines for %d events, progress included: %v", lines, len(events), bytes.Contains(out.Bytes(), []byte("tool_progress")))
	}
	log, err := os.ReadFile(filepath.Join(agent.SessionsDir(f.state), ss.ID()+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(log, []byte("progress")) || !bytes.Contains(log, []byte("one\\ntwo")) {
		t.Errorf("the session log holds progress, or lacks the result:\n%s", log)
	}
}

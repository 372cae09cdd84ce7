package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dshgo/harness/core"
	toolfs "github.com/dshgo/harness/plugins/tool-fs"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/tools"
)

// Tools registered through the session's scoped context are visible to
// that session only; their additional contexts follow the batch as
// plugin-sourced user messages; ConcludeTurn ends the turn without
// another model call.
func TestScopedToolContextsAndConclude(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []llmtest.Turn{
		llmtest.Stream(llmtest.ToolCallStart(0, "c1", "finish", `{}`), llmtest.ToolCallStart(1, "c2", "current_time", `{}`), llmtest.Finish("tool_calls")),
	})
	ss := f.open(agent.Options{})
	other := f.open(agent.Options{})
	reg, _ := core.Lookup(f.rc, tools.Key)
	finish := tools.Define("finish", "Finish the task.", func(ctx context.Context, e *tools.Execution, _ struct{}) (string, error) {
		e.DeferContext("remember: the task is finished")
		e.ConcludeTurn()
		return "finished", nil
	})
	if err := reg.Register(ss.Context(), finish); err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.Get("finish", other.Scope()); ok {
		t.Fatal("a session's tool leaked into another session")
	}
	res, err := ss.Run(context.Background(), "wrap up")
	if err != nil || res.Reason != "concluded" || res.Steps != 1 {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	h := ss.History()
	last := h[len(h)-1]
	if last.Role != llm.RoleUser || last.Content != "remember: the task is finished" || h[len(h)-2].ToolCallID != "c2" {
		t.Fatalf("history tail = %+v", h[len(h)-3:])
	}
	if f.srv.Remaining() != 0 || len(f.srv.Requests()) != 1 {
		t.Fatalf("requests = %d", len(f.srv.Requests()))
	}
	w := f.wire(0)
	names := []string{}
	for _, tl := range w.Tools {
		names = append(names, tl.Function.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "finish") {
		t.Fatalf("session tool not offered: %v", names)
	}
}

// Cancelling while the model streams stops the stream; the partial text
// shown so far is logged as an aborted assistant message.
func TestCancelDuringStream(t *testing.T) {
	t.Parallel()
	events := []string{llmtest.TextDelta("partial ")}
	for range 200 {
		events = append(events, llmtest.TextDelta("more "))
	}
	events = append(events, llmtest.Finish("stop"))
	f := newFixture(t, []llmtest.Turn{llmtest.Stream(events...)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ss := f.open(agent.Options{Observer: func(e agent.Event) {
		if e.Type == agent.EventText {
			cancel()
		}
	}})
	res, err := ss.Run(ctx, "talk")
	if !errors.Is(err, context.Canceled) || res.Reason != "aborted" {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	recs, _ := agent.ReadJournal(ss.LogPath())
	var asst *agent.Record
	for i := range recs {
		if recs[i].Type == agent.RecordAssistant {
			asst = &recs[i]
		}
	}
	// The observer cancelled on the first text: exactly that text is logged,
	// not what the transport had buffered after it.
	if asst == nil || !asst.Aborted || asst.Message.Content != "partial " {
		t.Fatalf("assistant record = %+v", asst)
	}
}

// The session's working directory reaches the coding tools through the
// call context (services/tools/workdir), whatever the process directory.
func TestSessionCwdReachesTools(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []llmtest.Turn{
		llmtest.Stream(llmtest.ToolCallStart(0, "c1", "read", `{"file_path":"notes.txt"}`), llmtest.Finish("tool_calls")),
		llmtest.Stream(llmtest.TextDelta("ok"), llmtest.Finish("stop")),
	})
	fb := f.rc.Plugin(toolfs.Plugin, nil)
	if err := fb.Await(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.write("notes.txt", "from the session directory\n")
	ss := f.open(agent.Options{Cwd: f.dir})
	if _, err := ss.Run(context.Background(), "read notes"); err != nil {
		t.Fatal(err)
	}
	w := f.wire(1)
	if got := w.Messages[len(w.Messages)-1].Text(); !strings.Contains(got, "from the session directory") {
		t.Fatalf("read result = %q", got)
	}
}

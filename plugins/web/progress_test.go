package web_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// TestToolProgressLiveNotReplayed: a bash call that prints, pauses and
// prints again streams its output so far (tool_progress events, before
// its result) to a watcher; the backlog drops a call's progress at its
// result, so a watcher that connects afterwards gets none.
func TestToolProgressLiveNotReplayed(t *testing.T) {
	t.Parallel()
	a, _ := json.Marshal(map[string]string{"command": "echo tick; sleep 1; echo tock", "description": "tick"})
	e := start(t, []llmtest.Turn{
		llmtest.Calls(llmtest.Call{ID: "p1", Name: "bash", Args: string(a)}),
		llmtest.Reply("ticked"),
	}, "bypass")
	ws := e.workspace(t.TempDir())
	id := e.newSession(ws)
	s := e.stream(ws, id, "")
	e.must(202, "POST", "/api/workspaces/"+ws.ID+"/sessions/"+id+"/prompt", map[string]string{"text": "tick"}, nil)
	p := s.until("the output so far", func(ev event) bool { return ev.Type == "tool_progress" || ev.Type == "tool_result" })
	if p.Type != "tool_progress" || p.ToolProgress == nil || p.ToolProgress.CallID != "p1" || !strings.Contains(p.ToolProgress.Tail, "tick") {
		t.Fatalf("before the result: %+v (seen %v)", p, types(s.seen))
	}
	res := s.until("the tool result", isType("tool_result"))
	if res.ToolResult.IsError || res.ToolResult.Content != "tick\ntock\n" {
		t.Fatalf("tool result %+v", res.ToolResult)
	}
	s.until("the end of the turn", isType("result"))
	late := e.stream(ws, id, "")
	late.until("the replayed end", isType("result"))
	for _, ev := range late.seen {
		if ev.Type == "tool_progress" {
			t.Fatalf("the backlog keeps a finished call's progress: %v", types(late.seen))
		}
	}
}

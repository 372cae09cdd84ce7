package web_test

import (
	"encoding/json"
	"testing"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// TestToolProgressStaysOffTheStream: a bash call that prints, pauses and
// prints again produces tool_progress events in the agent; the web stream
// carries none of them (the page shows the output with the result, and
// they would crowd the replay backlog out), and the turn streams as before.
func TestToolProgressStaysOffTheStream(t *testing.T) {
	t.Parallel()
	a, _ := json.Marshal(map[string]string{"command": "echo tick; sleep 0.5; echo tock", "description": "tick"})
	e := start(t, []llmtest.Turn{
		llmtest.Calls(llmtest.Call{ID: "p1", Name: "bash", Args: string(a)}),
		llmtest.Reply("ticked"),
	}, "bypass")
	ws := e.workspace(t.TempDir())
	id := e.newSession(ws)
	s := e.stream(ws, id, "")
	e.must(202, "POST", "/api/workspaces/"+ws.ID+"/sessions/"+id+"/prompt", map[string]string{"text": "tick"}, nil)
	res := s.until("the tool result", isType("tool_result"))
	if res.ToolResult.IsError || res.ToolResult.Content != "tick\ntock\n" {
		t.Fatalf("tool result %+v", res.ToolResult)
	}
	s.until("the end of the turn", isType("result"))
	for _, ev := range s.seen {
		if ev.Type == "tool_progress" {
			t.Fatalf("the stream carries a progress event: %v", types(s.seen))
		}
	}
}

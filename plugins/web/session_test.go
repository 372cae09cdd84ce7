package web_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// TestPromptStreamsApprovalWritesAndReplays: a prompt's answer streams over
// SSE as deltas; a write the policy asks about shows as an approval, and
// allowing it writes the file; a new stream (a reload) replays the session
// from its log with whole messages.
func TestPromptStreamsApprovalWritesAndReplays(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	target := filepath.Join(repo, "notes.txt")
	args, _ := json.Marshal(map[string]string{"file_path": target, "content": "written from the browser\n"})
	e := start(t, []llmtest.Turn{
		llmtest.Reply("Hello from the scripted model."),
		llmtest.Calls(llmtest.Call{ID: "call-1", Name: "write", Args: string(args)}),
		llmtest.Reply("The file is written."),
	}, "default")
	ws := e.workspace(repo)
	id := e.newSession(ws)
	s := e.stream(ws, id, "")
	s.until("session", isType("session"))

	var out struct{ Queued bool }
	e.must(202, "POST", "/api/workspaces/"+ws.ID+"/sessions/"+id+"/prompt", map[string]string{"text": "say hello"}, &out)
	var text strings.Builder
	s.until("the answer", func(ev event) bool {
		if ev.Type == "text" {
			text.WriteString(ev.Text)
		}
		return ev.Type == "result"
	})
	if text.String() != "Hello from the scripted model." || out.Queued {
		t.Fatalf("streamed %q (queued %v)", text.String(), out.Queued)
	}
	s.until("idle", func(ev event) bool { return ev.Type == "busy" && !ev.Busy })

	e.must(202, "POST", "/api/workspaces/"+ws.ID+"/sessions/"+id+"/prompt", map[string]string{"text": "write the notes"}, nil)
	call := s.until("the tool call", isType("tool_call"))
	if call.ToolCall.Name != "write" {
		t.Fatalf("tool call %+v", call.ToolCall)
	}
	ask := s.until("the approval", isType("approval"))
	if ask.Approval.Tool != "write" || !strings.Contains(ask.Approval.Arguments, "notes.txt") {
		t.Fatalf("approval %+v", ask.Approval)
	}
	if _, err := os.Stat(target); err == nil {
		t.Fatal("written before the approval")
	}
	code, _ := e.req("POST", "/api/workspaces/"+ws.ID+"/sessions/"+id+"/approvals/"+ask.Approval.ID, map[string]string{"answer": "maybe"})
	if code != 400 {
		t.Fatalf("a bad answer: %d", code)
	}
	e.must(204, "POST", "/api/workspaces/"+ws.ID+"/sessions/"+id+"/approvals/"+ask.Approval.ID, map[string]string{"answer": "once"}, nil)
	done := s.until("the answer's end", isType("approval_done"))
	if done.Answer != "allowed-once" {
		t.Fatalf("approval_done %+v", done)
	}
	res := s.until("the tool result", isType("tool_result"))
	if res.ToolResult.IsError {
		t.Fatalf("write failed: %s", res.ToolResult.Content)
	}
	s.until("the end of the turn", isType("result"))
	if b, err := os.ReadFile(target); err != nil || string(b) != "written from the browser\n" {
		t.Fatalf("file: %q %v", b, err)
	}

	// A reload: a new stream replays everything, deltas folded into whole messages.
	r := e.stream(ws, id, "")
	results := 0
	r.until("the replayed end (the second turn's result)", func(ev event) bool {
		if ev.Type == "result" {
			results++
		}
		return results == 2
	})
	var kinds []string
	for _, ev := range r.seen {
		if ev.Type == "text" {
			t.Fatalf("replay carries a delta: %+v", ev)
		}
		kinds = append(kinds, ev.Type)
	}
	got := strings.Join(kinds, " ")
	for _, want := range []string{"session", "user", "assistant", "tool_call", "approval", "approval_done", "tool_result", "result"} {
		if !strings.Contains(got, want) {
			t.Fatalf("replay %q lacks %s", got, want)
		}
	}

	// The sessions list has it, titled by the first prompt.
	var list []struct {
		ID, Title string
		Turns     int
	}
	e.must(200, "GET", "/api/workspaces/"+ws.ID+"/sessions", nil, &list)
	if len(list) != 1 || list[0].ID != id || list[0].Title != "say hello" || list[0].Turns != 2 {
		t.Fatalf("sessions %+v", list)
	}
}

// TestInterruptQueueAndDeny: a prompt sent while a turn runs is queued;
// interrupting cancels the turn (its pending approval is withdrawn) and
// drops the queue; a denial with a reason reaches the model as a denied call.
func TestInterruptQueueAndDeny(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	bash := func(id, cmd string) llmtest.Turn {
		a, _ := json.Marshal(map[string]string{"command": cmd, "description": "deploy"})
		return llmtest.Calls(llmtest.Call{ID: id, Name: "bash", Args: string(a)})
	}
	e := start(t, []llmtest.Turn{
		bash("c1", "make deploy-web-test-1"),
		bash("c2", "make deploy-web-test-2"),
		llmtest.Reply("Understood, not deploying."),
	}, "default")
	ws := e.workspace(repo)
	id := e.newSession(ws)
	s := e.stream(ws, id, "")
	base := "/api/workspaces/" + ws.ID + "/sessions/" + id
	e.must(202, "POST", base+"/prompt", map[string]string{"text": "deploy"}, nil)
	s.until("the approval", isType("approval"))
	var out struct{ Queued bool }
	e.must(202, "POST", base+"/prompt", map[string]string{"text": "then tell me"}, &out)
	if !out.Queued {
		t.Fatal("a prompt during a turn was not queued")
	}
	if q := s.until("the queue", isType("queue")); len(q.Queue) != 1 || q.Queue[0] != "then tell me" {
		t.Fatalf("queue %+v", q.Queue)
	}
	var intr struct{ Interrupted bool }
	e.must(200, "POST", base+"/interrupt", map[string]any{}, &intr)
	if !intr.Interrupted {
		t.Fatal("interrupt found no turn")
	}
	if d := s.until("the withdrawn approval", isType("approval_done")); d.Answer != "cancelled" {
		t.Fatalf("approval_done %+v", d)
	}
	if r := s.until("the aborted turn", isType("result")); r.Result.Reason != "aborted" {
		t.Fatalf("result %+v", r.Result)
	}
	s.until("idle", func(ev event) bool { return ev.Type == "busy" && !ev.Busy })

	e.must(202, "POST", base+"/prompt", map[string]string{"text": "deploy again"}, nil)
	ask := s.until("the second approval", isType("approval"))
	e.must(204, "POST", base+"/approvals/"+ask.Approval.ID, map[string]string{"answer": "deny", "reason": "not on a Friday"}, nil)
	if d := s.until("the denial", isType("approval_done")); d.Answer != "rejected" || d.Reason != "not on a Friday" {
		t.Fatalf("approval_done %+v", d)
	}
	res := s.until("the denied result", isType("tool_result"))
	if !res.ToolResult.IsError || !strings.Contains(res.ToolResult.Content, "not on a Friday") {
		t.Fatalf("denied call: %+v", res.ToolResult)
	}
	if len(ask.Approval.AlwaysRules) == 0 || ask.Approval.Always != strings.Join(ask.Approval.AlwaysRules, ", ") {
		t.Fatalf("the approval does not say what always adds: %+v", ask.Approval)
	}
	s.until("the end", isType("result"))
	if n := e.model.Remaining(); n != 0 {
		t.Fatalf("%d scripted turns unused", n)
	}
}

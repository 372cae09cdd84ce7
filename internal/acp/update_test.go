package acp

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/tools"
)

// wire renders updates as the JSON lines a client receives.
func wire(t *testing.T, us []sdk.SessionUpdate) string {
	t.Helper()
	var b strings.Builder
	for _, u := range us {
		j, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

func intp(i int) *int { return &i }

func TestTextAndReasoningDeltasAreMessageAndThoughtChunks(t *testing.T) {
	m := newMapper(false)
	var us []sdk.SessionUpdate
	for _, e := range []agent.Event{
		{Type: agent.EventReasoning, Text: "Let me look."},
		{Type: agent.EventText, Text: "Hello"},
		{Type: agent.EventText, Text: ""},
		{Type: agent.EventStep, Step: 2},
		{Type: agent.EventUsage},
	} {
		us = append(us, m.updates(e)...)
	}
	want := `{"content":{"text":"Let me look.","type":"text"},"sessionUpdate":"agent_thought_chunk"}
{"content":{"text":"Hello","type":"text"},"sessionUpdate":"agent_message_chunk"}
`
	if got := wire(t, us); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// An edit's call forwards its presentation as it is: the diff content,
// locations and raw input of tool_call; its result is a tool_call_update
// without the raw input.
func TestAToolCallForwardsItsPresentation(t *testing.T) {
	m := newMapper(false)
	old := "a\n"
	pending := tools.Presentation{ToolCallID: "c1", Title: "main.go", Kind: tools.KindEdit, Status: tools.StatusPending,
		Content:   []tools.ToolCallContent{tools.DiffContent("/w/main.go", &old, "b\n")},
		Locations: []tools.Location{{Path: "/w/main.go", Line: 3}}, RawInput: json.RawMessage(`{"file_path":"main.go"}`)}
	done := pending
	done.Status, done.RawInput = tools.StatusCompleted, nil
	done.Summarize("1 line changed")
	us := m.updates(agent.Event{Type: agent.EventToolCall, ToolCall: &agent.ToolCallEvent{ID: "c1", Name: "edit", Arguments: `{"file_path":"main.go"}`, Presentation: &pending}})
	us = append(us, m.updates(agent.Event{Type: agent.EventToolResult, ToolResult: &agent.ToolResultEvent{CallID: "c1", Name: "edit", Presentation: &done}})...)
	want := `{"content":[{"newText":"b\n","oldText":"a\n","path":"/w/main.go","type":"diff"}],"kind":"edit","locations":[{"line":3,"path":"/w/main.go"}],"rawInput":{"file_path":"main.go"},"sessionUpdate":"tool_call","status":"pending","title":"main.go","toolCallId":"c1"}
{"_meta":{"summary":"1 line changed"},"content":[{"newText":"b\n","oldText":"a\n","path":"/w/main.go","type":"diff"}],"kind":"edit","locations":[{"line":3,"path":"/w/main.go"}],"sessionUpdate":"tool_call_update","status":"completed","title":"main.go","toolCallId":"c1"}
`
	if got := wire(t, us); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if len(m.open) != 0 {
		t.Errorf("the finished call is still open: %v", m.open)
	}
}

// A command's terminal content is a text block (fenced output, then how
// it ended) for a client that did not announce terminal_output, and is
// forwarded as it is for one that did.
func TestTerminalContentIsTextUnlessTheClientShowsTerminals(t *testing.T) {
	failed := tools.Presentation{ToolCallID: "c2", Title: "go test", Kind: tools.KindExecute,
		Content: []tools.ToolCallContent{tools.TerminalContent("c2", "FAIL x\n", intp(1), "")}}
	failed.Fail("exit code 1")
	call := agent.Event{Type: agent.EventToolCall, ToolCall: &agent.ToolCallEvent{ID: "c2", Name: "bash", Presentation: &tools.Presentation{ToolCallID: "c2", Title: "go test", Kind: tools.KindExecute, Status: tools.StatusPending}}}
	result := agent.Event{Type: agent.EventToolResult, ToolResult: &agent.ToolResultEvent{CallID: "c2", Name: "bash", Presentation: &failed}}

	m := newMapper(false)
	m.updates(call)
	got := wire(t, m.updates(result))
	want := `{"_meta":{"reason":"exit code 1"},"content":[{"content":{"text":"` + "```" + `\nFAIL x\n` + "```" + `\nexit code 1\n","type":"text"},"type":"content"}],"kind":"execute","sessionUpdate":"tool_call_update","status":"failed","title":"go test","toolCallId":"c2"}
`
	if got != want {
		t.Errorf("without terminal_output got\n%s\nwant\n%s", got, want)
	}

	m = newMapper(true)
	m.updates(call)
	got = wire(t, m.updates(result))
	want = `{"_meta":{"reason":"exit code 1"},"content":[{"_meta":{"exitCode":1,"output":"FAIL x\n"},"terminalId":"c2","type":"terminal"}],"kind":"execute","sessionUpdate":"tool_call_update","status":"failed","title":"go test","toolCallId":"c2"}
`
	if got != want {
		t.Errorf("with terminal_output got\n%s\nwant\n%s", got, want)
	}
}

// Progress of an open call is an in_progress update; progress of a call
// never announced (a subagent's) is dropped.
func TestProgressUpdatesOnlyAnnouncedCalls(t *testing.T) {
	m := newMapper(false)
	m.updates(agent.Event{Type: agent.EventToolCall, ToolCall: &agent.ToolCallEvent{ID: "c3", Name: "bash", Presentation: &tools.Presentation{ToolCallID: "c3", Title: "make", Status: tools.StatusPending}}})
	running := tools.Presentation{ToolCallID: "c3", Status: tools.StatusInProgress, Content: []tools.ToolCallContent{tools.TerminalContent("c3", "cc -c a.c\n", nil, "")}}
	got := wire(t, m.updates(agent.Event{Type: agent.EventToolProgress, ToolProgress: &agent.ToolProgressEvent{CallID: "c3", Presentation: &running}}))
	want := `{"content":[{"content":{"text":"` + "```" + `\ncc -c a.c\n` + "```" + `\n","type":"text"},"type":"content"}],"sessionUpdate":"tool_call_update","status":"in_progress","toolCallId":"c3"}
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	other := tools.Presentation{ToolCallID: "zz", Status: tools.StatusInProgress}
	if us := m.updates(agent.Event{Type: agent.EventToolProgress, ToolProgress: &agent.ToolProgressEvent{CallID: "zz", Presentation: &other}}); us != nil {
		t.Errorf("progress of an unknown call: %s", wire(t, us))
	}
	if us := m.updates(agent.Event{Type: agent.EventText, Text: "sub", Depth: 1}); us != nil {
		t.Errorf("a subagent's text: %s", wire(t, us))
	}
}

// A call that sets the plan (the todo tool) is followed by a plan update
// with every entry (ACP requires a priority: medium when the plan has
// none).
func TestACallThatSetsThePlanSendsAPlanUpdate(t *testing.T) {
	m := newMapper(false)
	m.updates(agent.Event{Type: agent.EventToolCall, ToolCall: &agent.ToolCallEvent{ID: "t1", Name: "todo_write", Arguments: `{}`}})
	done := tools.Presentation{ToolCallID: "t1", Kind: tools.KindThink, Status: tools.StatusCompleted}
	done.SetPlan([]tools.PlanEntry{{Content: "Read", Status: tools.PlanCompleted}, {Content: "Fix", Status: tools.PlanInProgress, Priority: "high", ActiveForm: "Fixing"}})
	us := m.updates(agent.Event{Type: agent.EventToolResult, ToolResult: &agent.ToolResultEvent{CallID: "t1", Name: "todo_write", Presentation: &done}})
	if len(us) != 2 {
		t.Fatalf("want the update and the plan, got %s", wire(t, us))
	}
	want := `{"entries":[{"content":"Read","priority":"medium","status":"completed"},{"content":"Fix","priority":"high","status":"in_progress"}],"sessionUpdate":"plan"}
`
	if got := wire(t, us[1:]); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// A turn that ends (cancelled) with calls still open fails each of them,
// in announcement order, and forgets them.
func TestUnfinishedCallsEndFailed(t *testing.T) {
	m := newMapper(false)
	for _, id := range []string{"a", "b"} {
		m.updates(agent.Event{Type: agent.EventToolCall, ToolCall: &agent.ToolCallEvent{ID: id, Name: "bash", Arguments: `{"command":"sleep 9"}`}})
	}
	got := wire(t, m.unfinished("cancelled"))
	want := `{"_meta":{"reason":"cancelled"},"sessionUpdate":"tool_call_update","status":"failed","toolCallId":"a"}
{"_meta":{"reason":"cancelled"},"sessionUpdate":"tool_call_update","status":"failed","toolCallId":"b"}
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if us := m.unfinished("again"); us != nil {
		t.Errorf("second time: %s", wire(t, us))
	}
}

// The stop reasons of the agent's result reasons.
func TestStopReasons(t *testing.T) {
	for _, c := range []struct {
		reason    string
		cancelled bool
		want      sdk.StopReason
	}{
		{"stop", false, sdk.StopReasonEndTurn},
		{"concluded", false, sdk.StopReasonEndTurn},
		{"plan", false, sdk.StopReasonEndTurn},
		{"budget", false, sdk.StopReasonEndTurn},
		{"length", false, sdk.StopReasonMaxTokens},
		{"max_steps", false, sdk.StopReasonMaxTurnRequests},
		{"aborted", false, sdk.StopReasonCancelled},
		{"error", true, sdk.StopReasonCancelled},
	} {
		resp, err := stopReason(&agent.Result{Reason: c.reason}, nil, c.cancelled)
		if err != nil || resp.StopReason != c.want {
			t.Errorf("%s (cancelled %v): %v %v, want %s", c.reason, c.cancelled, resp.StopReason, err, c.want)
		}
	}
	_, err := stopReason(&agent.Result{Reason: "error", Error: "SERVER (HTTP 500): boom"}, nil, false)
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code != -32603 || !strings.Contains(re.Message, "SERVER (HTTP 500): boom") {
		t.Errorf("a failed model call: %v", err)
	}
}

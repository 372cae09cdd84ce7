package agent_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/tools"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenTurn is one turn with every event type: a resumed session, a
// plugin-sourced and a typed prompt, reasoning and text deltas with HTML
// characters, a succeeded, a denied and a timed-out tool call and one that
// sets the plan (each with its presentations), an estimated and a
// reported usage, a state change, a notice, a compaction and the result.
func goldenTurn() []agent.Event {
	const todoArgs = `{"todos":[{"content":"fix a","status":"in_progress","activeForm":"fixing a"},{"content":"test","status":"pending"}]}`
	const sid = "20260102-030405-abcdef"
	usage := &llm.Usage{PromptTokens: 900, CompletionTokens: 50, TotalTokens: 950, CacheHitTokens: 800, CacheMissTokens: 100}
	return []agent.Event{
		{Type: agent.EventSession, SessionID: sid, Cwd: "/repo", Model: "deepseek/deepseek-chat"},
		{Type: agent.EventUser, SessionID: sid, Turn: 1, Text: "<env>linux</env>", Source: agent.SourceRuntimeContext},
		{Type: agent.EventUser, SessionID: sid, Turn: 1, Text: "fix a < b && c"},
		{Type: agent.EventStep, SessionID: sid, Turn: 1, Step: 1},
		{Type: agent.EventReasoning, SessionID: sid, Turn: 1, Step: 1, Text: "Read it first."},
		{Type: agent.EventText, SessionID: sid, Turn: 1, Step: 1, Text: "Reading <a.go>"},
		{Type: agent.EventUsage, SessionID: sid, Turn: 1, Step: 1, Usage: usage, Total: usage, ContextTokens: 950},
		{Type: agent.EventAssistant, SessionID: sid, Turn: 1, Step: 1, Message: &llm.Message{Role: llm.RoleAssistant, Content: "Reading <a.go>", Reasoning: "Read it first.",
			ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read", Arguments: `{"file_path":"a.go"}`}, {ID: "c2", Name: "bash", Arguments: `{"command":"go  vet\n./..."}`},
				{ID: "c3", Name: "bash", Arguments: `{"command":"sleep 9","timeoutMs":200}`}, {ID: "c4", Name: "todo_write", Arguments: todoArgs}}}},
		{Type: agent.EventToolCall, SessionID: sid, Turn: 1, Step: 1, ToolCall: &agent.ToolCallEvent{ID: "c1", Name: "read", Arguments: `{"file_path":"a.go"}`,
			Presentation: &tools.Presentation{ToolCallID: "c1", Title: "a.go", Kind: tools.KindRead, Status: tools.StatusPending,
				Locations: []tools.Location{{Path: "/repo/a.go"}}, RawInput: json.RawMessage(`{"file_path":"a.go"}`)}}},
		{Type: agent.EventToolResult, SessionID: sid, Turn: 1, Step: 1, ToolResult: &agent.ToolResultEvent{CallID: "c1", Name: "read", Content: "package a\n\nfunc f() {}\n", Meta: json.RawMessage(`{"lines":3}`), DurationMs: 2,
			Presentation: &tools.Presentation{ToolCallID: "c1", Title: "a.go", Kind: tools.KindRead, Status: tools.StatusCompleted,
				Locations: []tools.Location{{Path: "/repo/a.go"}}, Meta: &tools.PresentationMeta{Summary: "lines 1-3 of 3"}}}},
		{Type: agent.EventToolCall, SessionID: sid, Turn: 1, Step: 1, ToolCall: &agent.ToolCallEvent{ID: "c2", Name: "bash", Arguments: `{"command":"go  vet\n./..."}`,
			Presentation: &tools.Presentation{ToolCallID: "c2", Title: "go  vet …", Kind: tools.KindExecute, Status: tools.StatusPending, RawInput: json.RawMessage(`{"command":"go  vet\n./..."}`)}}},
		{Type: agent.EventToolResult, SessionID: sid, Turn: 1, Step: 1, ToolResult: &agent.ToolResultEvent{CallID: "c2", Name: "bash", Content: "permission denied:\n  bash is not allowed", IsError: true,
			Error: &tools.ErrorInfo{Name: "PermissionDenied", Code: "PERMISSION_DENIED", Reason: "deny rule"}, DurationMs: 0, Denied: true,
			Presentation: &tools.Presentation{ToolCallID: "c2", Title: "go  vet …", Kind: tools.KindExecute, Status: tools.StatusFailed,
				Meta: &tools.PresentationMeta{Reason: "permission denied: bash is not allowed"}}}},
		{Type: agent.EventToolCall, SessionID: sid, Turn: 1, Step: 1, ToolCall: &agent.ToolCallEvent{ID: "c3", Name: "bash", Arguments: `{"command":"sleep 9","timeoutMs":200}`,
			Presentation: &tools.Presentation{ToolCallID: "c3", Title: "sleep 9", Kind: tools.KindExecute, Status: tools.StatusPending, RawInput: json.RawMessage(`{"command":"sleep 9","timeoutMs":200}`)}}},
		{Type: agent.EventToolResult, SessionID: sid, Turn: 1, Step: 1, ToolResult: &agent.ToolResultEvent{CallID: "c3", Name: "bash", Content: "(no output)\n[timed out after 200ms]\n[killed by signal: SIGTERM]", DurationMs: 210,
			Presentation: &tools.Presentation{ToolCallID: "c3", Title: "sleep 9", Kind: tools.KindExecute, Status: tools.StatusFailed,
				Content: []tools.ToolCallContent{tools.TerminalContent("c3", "", nil, "SIGTERM")}, Meta: &tools.PresentationMeta{Reason: "timed out after 200ms"}}}},
		{Type: agent.EventToolCall, SessionID: sid, Turn: 1, Step: 1, ToolCall: &agent.ToolCallEvent{ID: "c4", Name: "todo_write", Arguments: todoArgs,
			Presentation: &tools.Presentation{ToolCallID: "c4", Title: "fixing a", Kind: tools.KindThink, Status: tools.StatusPending,
				Content: []tools.ToolCallContent{tools.TextContent("[>] fix a (fixing a)\n[ ] test\n")}, RawInput: json.RawMessage(todoArgs)}}},
		{Type: agent.EventToolResult, SessionID: sid, Turn: 1, Step: 1, ToolResult: &agent.ToolResultEvent{CallID: "c4", Name: "todo_write", Content: "Todo list updated.\n[>] fix a (fixing a)\n[ ] test\n", DurationMs: 1,
			Presentation: &tools.Presentation{ToolCallID: "c4", Title: "fixing a", Kind: tools.KindThink, Status: tools.StatusCompleted,
				Content: []tools.ToolCallContent{tools.TextContent("[>] fix a (fixing a)\n[ ] test\n")}, Meta: &tools.PresentationMeta{Summary: "0 of 2 done",
					Plan: []tools.PlanEntry{{Content: "fix a", Status: tools.PlanInProgress, ActiveForm: "fixing a"}, {Content: "test", Status: tools.PlanPending}}}}}},
		{Type: agent.EventState, SessionID: sid, Turn: 1, Key: "todos", State: json.RawMessage(`[{"content":"fix a","status":"in_progress","activeForm":"fixing a"},{"content":"test","status":"pending"}]`)},
		{Type: agent.EventNotice, SessionID: sid, Turn: 1, Text: "the reply was cut by the model's output token limit"},
		{Type: agent.EventStep, SessionID: sid, Turn: 1, Step: 2},
		{Type: agent.EventText, SessionID: sid, Turn: 1, Step: 2, Text: "Fixed."},
		{Type: agent.EventUsage, SessionID: sid, Turn: 1, Step: 2, Usage: &llm.Usage{PromptTokens: 1000, CompletionTokens: 10, TotalTokens: 1010},
			Total: &llm.Usage{PromptTokens: 1900, CompletionTokens: 60, TotalTokens: 1960}, Estimated: true, ContextTokens: 1010},
		{Type: agent.EventAssistant, SessionID: sid, Turn: 1, Step: 2, Message: &llm.Message{Role: llm.RoleAssistant, Content: "Fixed."}},
		{Type: agent.EventCompaction, SessionID: sid, Turn: 1, Compaction: &agent.CompactionInfo{Trigger: "auto", Summarized: 4, Kept: 2, TokensBefore: 1960, TokensAfter: 300}},
		{Type: agent.EventResult, SessionID: sid, Turn: 1, Result: &agent.Result{Text: "Fixed.", SessionID: sid, Reason: "stop", Steps: 2,
			Usage: llm.Usage{PromptTokens: 1900, CompletionTokens: 60, TotalTokens: 1960}, Estimated: true, DurationMs: 1234}},
	}
}

// checkGolden compares got with testdata/name, or rewrites the file
// under -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it; review the diff):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestStreamJSONIsTheGoldenWireForm(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	enc := agent.NewStreamJSONEncoder(&b)
	for _, e := range goldenTurn() {
		if err := enc.Encode(e); err != nil {
			t.Fatal(err)
		}
	}
	checkGolden(t, "stream.jsonl", b.Bytes())
}

func TestEventMarshalJSONIsTheStreamLine(t *testing.T) {
	t.Parallel()
	lines := strings.SplitAfter(mustEncode(t, goldenTurn()), "\n")
	for i, e := range goldenTurn() {
		got, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		// json.Marshal escapes HTML in a Marshaler's output; an encoder
		// with SetEscapeHTML(false) (the stream's) keeps it as it is.
		var raw bytes.Buffer
		enc := json.NewEncoder(&raw)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(e); err != nil {
			t.Fatal(err)
		}
		if raw.String() != lines[i] {
			t.Errorf("event %d: encoder %q, stream %q", i, raw.String(), lines[i])
		}
		var back agent.Event
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatal(err)
		}
		again, _ := json.Marshal(back)
		if !bytes.Equal(again, got) {
			t.Errorf("event %d does not round-trip:\n%s\n%s", i, got, again)
		}
	}
}

func TestStreamJSONKeepsBooleansOfItsType(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		e    agent.Event
		want string
	}{
		{agent.Event{Type: agent.EventSession}, `{"v":1,"type":"session","resumed":false}`},
		{agent.Event{Type: agent.EventSession, Resumed: true}, `{"v":1,"type":"session","resumed":true}`},
		{agent.Event{Type: agent.EventUsage}, `{"v":1,"type":"usage","estimated":false}`},
		{agent.Event{Type: agent.EventText, Text: "<&>"}, `{"v":1,"type":"text","text":"<&>"}`},
	} {
		got, err := c.e.MarshalJSON()
		if err != nil || string(got) != c.want {
			t.Errorf("%+v: got %s (%v), want %s", c.e, got, err, c.want)
		}
	}
}

func TestStreamJSONEncoderRefusesInvalidJSONAndWritesNothing(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	err := agent.NewStreamJSONEncoder(&b).Encode(agent.Event{Type: agent.EventState, Key: "k", State: json.RawMessage(`{bad`)})
	if err == nil || b.Len() != 0 {
		t.Fatalf("err %v, wrote %q", err, b.String())
	}
}

func TestStreamJSONLinesOfConcurrentEncodesDoNotInterleave(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	enc := agent.NewStreamJSONEncoder(&b)
	long := strings.Repeat("x", 64<<10)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 20 {
				_ = enc.Encode(agent.Event{Type: agent.EventText, Step: i + 1, Text: long})
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 160 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, l := range lines {
		var e agent.Event
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Text != long {
			t.Fatalf("line %.80q…: %v", l, err)
		}
	}
}

func mustEncode(t *testing.T, es []agent.Event) string {
	t.Helper()
	var b bytes.Buffer
	enc := agent.NewStreamJSONEncoder(&b)
	for _, e := range es {
		if err := enc.Encode(e); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// A front end writes a session's events as stream-json by handing the
// encoder to the session's observer.
func ExampleNewStreamJSONEncoder() {
	enc := agent.NewStreamJSONEncoder(os.Stdout)
	observer := func(e agent.Event) { _ = enc.Encode(e) } // agent.Options.Observer
	observer(agent.Event{Type: agent.EventSession, SessionID: "s1", Cwd: "/repo", Model: "deepseek/deepseek-chat"})
	observer(agent.Event{Type: agent.EventText, SessionID: "s1", Turn: 1, Step: 1, Text: "a < b"})
	// Output:
	// {"v":1,"type":"session","sessionId":"s1","cwd":"/repo","model":"deepseek/deepseek-chat","resumed":false}
	// {"v":1,"type":"text","sessionId":"s1","turn":1,"step":1,"text":"a < b"}
}

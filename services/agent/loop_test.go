package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/tokenmeter"
)

func collect(evs *[]agent.Event, mu *sync.Mutex) func(agent.Event) {
	return func(e agent.Event) { mu.Lock(); *evs = append(*evs, e); mu.Unlock() }
}

func TestRunParallelReadsThenAnswerReplaysExactly(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []llmtest.Turn{
		llmtest.Stream(
			llmtest.ToolCallStart(0, "c1", "read_file", `{"path":"a.txt"}`),
			llmtest.ToolCallStart(1, "c2", "read_file", `{"path":"b.txt"}`),
			llmtest.FinishWithUsage("tool_calls", llmtest.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110}),
		),
		llmtest.Stream(llmtest.TextDelta("a and "), llmtest.TextDelta("b"), llmtest.FinishWithUsage("stop", llmtest.Usage{PromptTokens: 150, CompletionTokens: 5, TotalTokens: 155})),
	})
	f.write("a.txt", "alpha")
	f.write("b.txt", "beta")
	var (
		evs []agent.Event
		mu  sync.Mutex
	)
	ss := f.open(agent.Options{Observer: collect(&evs, &mu)})
	res, err := ss.Run(context.Background(), "read both")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "a and b" || res.Steps != 2 || res.IsError || res.Reason != "stop" || res.Usage.PromptTokens != 250 || res.Usage.TotalTokens != 265 {
		t.Fatalf("result = %+v", res)
	}
	// Request 2 carries both results in model order after the assistant's calls.
	w := f.wire(1)
	var roles []string
	for _, m := range w.Messages {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, ","); got != "system,user,assistant,tool,tool" {
		t.Fatalf("roles = %s", got)
	}
	if w.Messages[3].ToolCallID != "c1" || w.Messages[3].Text() != "alpha" || w.Messages[4].ToolCallID != "c2" || w.Messages[4].Text() != "beta" {
		t.Fatalf("tool messages = %+v", w.Messages[3:])
	}
	if len(w.Tools) != 3 {
		t.Fatalf("tools = %d", len(w.Tools))
	}
	// The log replays to the same conversation.
	recs, err := agent.ReadJournal(ss.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	if got := agent.Replay(recs); !reflect.DeepEqual(got, ss.History()) {
		t.Fatalf("replay differs:\n%+v\n%+v", got, ss.History())
	}
	var types []string
	for _, r := range recs {
		types = append(types, r.Type)
	}
	want := "session,user,prefix,usage,assistant,tool/call,tool/call,tool/result,tool/result,usage,assistant"
	if got := strings.Join(types, ","); got != want {
		t.Fatalf("records = %s", got)
	}
	// Events in order.
	var et []string
	for _, e := range evs {
		if e.Type != agent.EventText {
			et = append(et, string(e.Type))
		}
	}
	wantEv := "session,user,step,usage,assistant,tool_call,tool_call,tool_result,tool_result,step,usage,assistant,result"
	if got := strings.Join(et, ","); got != wantEv {
		t.Fatalf("events = %s", got)
	}
}

// B12: interleaved fragments by index, empty arguments normalised to {}.
func TestB12InterleavedParallelToolCalls(t *testing.T) {
	t.Parallel()
	events := []string{
		`{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read_file","arguments":""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"read_file","arguments":"{\"pa"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"a."}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"th\":\"b.txt\"}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"txt\"}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"id":"call_c","type":"function","function":{"name":"current_time","arguments":""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	}
	f := newFixture(t, []llmtest.Turn{llmtest.Stream(events...), llmtest.Stream(llmtest.TextDelta("ok"), llmtest.Finish("stop"))})
	f.write("a.txt", "A")
	f.write("b.txt", "B")
	ss := f.open(agent.Options{})
	if _, err := ss.Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	w := f.wire(1)
	asst := w.Messages[2]
	var got []string
	for _, tc := range asst.ToolCalls {
		got = append(got, tc.ID+" "+tc.Function.Name+" "+tc.Function.Arguments)
	}
	want := []string{`call_a read_file {"path":"a.txt"}`, `call_b read_file {"path":"b.txt"}`, `call_c current_time {}`}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("tool calls = %q", got)
	}
	var results []string
	for _, m := range w.Messages[3:] {
		results = append(results, m.ToolCallID+"="+m.Text())
	}
	if strings.Join(results, ",") != "call_a=A,call_b=B,call_c=12:00" {
		t.Fatalf("results = %v", results)
	}
}

// B12 variant 3 and invalid arguments: truncated JSON and schema violations
// go back to the model as error results; the loop recovers.
func TestInvalidToolArgumentsReturnedToModel(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []llmtest.Turn{
		llmtest.Stream(
			llmtest.ToolCallStart(0, "c1", "current_time", `{"x":`),
			llmtest.ToolCallStart(1, "c2", "read_file", `{"path":5}`),
			llmtest.ToolCallStart(2, "c3", "nope", `{}`),
			llmtest.Finish("tool_calls")),
		llmtest.Stream(llmtest.TextDelta("recovered"), llmtest.Finish("stop")),
	})
	ss := f.open(agent.Options{})
	res, err := ss.Run(context.Background(), "go")
	if err != nil || res.Text != "recovered" {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	w := f.wire(1)
	tm := w.Messages[3:]
	if len(tm) != 3 {
		t.Fatalf("tool messages: %d", len(tm))
	}
	for i, wantPrefix := range []string{"Error: invalid arguments: truncated JSON", "Error: invalid arguments", "Error: unknown tool"} {
		if !strings.HasPrefix(tm[i].Text(), wantPrefix) {
			t.Errorf("result %d = %q, want prefix %q", i, tm[i].Text(), wantPrefix)
		}
	}
	recs, _ := agent.ReadJournal(ss.LogPath())
	var codes []string
	for _, r := range recs {
		if r.Type == agent.RecordToolResult {
			if !r.IsError || r.Error == nil {
				t.Fatalf("record %+v", r)
			}
			codes = append(codes, r.Error.Code)
		}
	}
	if strings.Join(codes, ",") != "INVALID_ARGS,INVALID_ARGS,UNKNOWN_TOOL" {
		t.Fatalf("codes = %v", codes)
	}
}

// B14: reasoning_content is sent back on assistant turns with tool calls,
// across turns; reasoning never leaks into content.
func TestB14ReasoningRoundTrip(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []llmtest.Turn{
		llmtest.Stream(
			llmtest.Raw(`{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":"Need the file "}}]}`),
			llmtest.Raw(`{"choices":[{"index":0,"delta":{"reasoning_content":"first."}}]}`),
			llmtest.Raw(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_r1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"notes.txt\"}"}}]}}]}`),
			llmtest.Raw(`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`)),
		llmtest.Stream(llmtest.TextDelta("It says hello."), llmtest.Finish("stop")),
		llmtest.Stream(llmtest.TextDelta("Second answer."), llmtest.Finish("stop")),
	}, llmtest.WithCheck(llmtest.DeepSeekReasoningCheck))
	f.write("notes.txt", "hello")
	var (
		evs []agent.Event
		mu  sync.Mutex
	)
	ss := f.open(agent.Options{Observer: collect(&evs, &mu)})
	if res, err := ss.Run(context.Background(), "what do the notes say?"); err != nil || res.Text != "It says hello." {
		t.Fatalf("turn 1: %+v %v", res, err)
	}
	if res, err := ss.Run(context.Background(), "and again?"); err != nil || res.Text != "Second answer." {
		t.Fatalf("turn 2: %+v %v", res, err)
	}
	for _, i := range []int{1, 2} {
		w := f.wire(i)
		a := w.Messages[2]
		if a.Role != "assistant" || a.ReasoningContent == nil || *a.ReasoningContent != "Need the file first." || a.Text() != "" || len(a.ToolCalls) != 1 || a.ToolCalls[0].ID != "call_r1" {
			t.Fatalf("request %d assistant = %+v", i+1, a)
		}
		if tm := w.Messages[3]; tm.Role != "tool" || tm.ToolCallID != "call_r1" || tm.Text() != "hello" {
			t.Fatalf("request %d tool = %+v", i+1, tm)
		}
	}
	var reasoning string
	for _, e := range evs {
		if e.Type == agent.EventReasoning {
			reasoning += e.Text
		}
	}
	if reasoning != "Need the file first." {
		t.Fatalf("reasoning events = %q", reasoning)
	}
}

// B23: DeepSeek usage with cache hits is recorded once, not doubled.
func TestB23UsageAndCacheFigures(t *testing.T) {
	t.Parallel()
	u := llmtest.Usage{PromptTokens: 98716, CompletionTokens: 78, TotalTokens: 98794, PromptCacheHitTokens: 98432, PromptCacheMissTokens: 284,
		CompletionDetails: &llmtest.TokenDetails{ReasoningTokens: 40}}
	f := newFixture(t, []llmtest.Turn{
		llmtest.Stream(llmtest.TextDelta("x"), llmtest.FinishWithUsage("stop", u)),
		llmtest.Stream(llmtest.TextDelta("y"), llmtest.Finish("stop")),
	})
	ss := f.open(agent.Options{})
	res, err := ss.Run(context.Background(), "hi")
	if err != nil {
		t.Fatal(err)
	}
	got := res.Usage
	if got.ContextTokens() != 98716 || got.CacheHitTokens != 98432 || got.CacheMissTokens != 284 || got.CompletionTokens != 78 || got.ReasoningTokens != 40 {
		t.Fatalf("usage = %+v", got)
	}
	if r := got.CacheHitRatio(); r < 0.997 || r >= 0.998 {
		t.Fatalf("ratio = %v", r)
	}
	if res.Estimated {
		t.Fatalf("reported usage flagged as estimated: %+v", res)
	}
	// A stream without usage is recorded as estimated, never as zero; the
	// turn's result reports the estimate with the same flag (issue 20
	// item 10: `harness run -o json` printed zeros).
	res2, err := ss.Run(context.Background(), "again")
	if err != nil {
		t.Fatal(err)
	}
	if !res2.Estimated || res2.Usage.PromptTokens < 98716 || res2.Usage.TotalTokens <= res2.Usage.PromptTokens {
		t.Fatalf("estimated turn result: estimated=%v usage=%+v", res2.Estimated, res2.Usage)
	}
	if ss.Usage() != got {
		t.Fatalf("session total %+v != %+v", ss.Usage(), got)
	}
	recs, _ := agent.ReadJournal(ss.LogPath())
	var estimated, reported int
	for _, r := range recs {
		if r.Type == agent.RecordUsage {
			if r.Estimated && r.Usage != nil && r.Usage.PromptTokens > 0 {
				estimated++
			} else if r.Usage != nil && *r.Usage == got {
				reported++
			}
		}
	}
	if estimated != 1 || reported != 1 {
		t.Fatalf("usage records: %d estimated, %d reported", estimated, reported)
	}
	// The token meter saw both requests: the first anchored on usage
	// (context 98716, not 197148), the second estimated, never zero.
	meter, ok := core.Lookup(f.rc, tokenmeter.Key)
	if !ok {
		t.Fatal("no meter")
	}
	st := meter.Session(ss.ID()).Stats()
	if st.Requests != 2 || st.EstimatedRequests != 1 || st.Last == nil || !st.Last.Estimated || st.Last.PromptTokens < 98716 {
		t.Fatalf("meter stats = %+v last=%+v", st, st.Last)
	}
}

func TestMaxSteps(t *testing.T) {
	t.Parallel()
	call := llmtest.Stream(llmtest.ToolCallStart(0, "c", "current_time", ""), llmtest.Finish("tool_calls"))
	f := newFixtureCfg(t, []llmtest.Turn{call, call, call}, agent.Config{MaxSteps: 2})
	ss := f.open(agent.Options{})
	res, err := ss.Run(context.Background(), "loop")
	if !errors.Is(err, agent.ErrMaxSteps) || res.Reason != "max_steps" || !res.IsError || res.Steps != 2 {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	if f.srv.Remaining() != 1 {
		t.Fatalf("requests made: %d", 3-f.srv.Remaining())
	}
}

func TestModelErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		turns []llmtest.Turn
		code  llm.Code
		text  string
	}{
		{"401", []llmtest.Turn{llmtest.Error(401, "Authentication Fails (no such user)")}, llm.CodeAuth, ""},
		{"429 then success", []llmtest.Turn{llmtest.Error(429, "slow down"), llmtest.Stream(llmtest.TextDelta("fine"), llmtest.Finish("stop"))}, "", "fine"},
		{"stream cut mid-way", []llmtest.Turn{{Events: []string{llmtest.TextDelta("partial ")}, Drop: true}}, llm.CodeNetwork, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.turns)
			ss := f.open(agent.Options{})
			res, err := ss.Run(context.Background(), "hi")
			if tc.code == "" {
				if err != nil || res.Text != tc.text {
					t.Fatalf("res=%+v err=%v", res, err)
				}
				return
			}
			le, ok := llm.AsError(err)
			if !ok || !res.IsError || res.Reason != "error" {
				t.Fatalf("res=%+v err=%v", res, err)
			}
			if le.Code != tc.code && !(tc.code == llm.CodeNetwork && le.Code == llm.CodeProtocol) {
				t.Fatalf("code = %s (%v)", le.Code, err)
			}
			// The session stays usable: the log replays to a valid history,
			// the failure recorded as an assistant message after the prompt.
			recs, _ := agent.ReadJournal(ss.LogPath())
			if h := agent.Replay(recs); len(h) != 2 || h[0].Role != llm.RoleUser || h[1].Role != llm.RoleAssistant || h[1].Content == "" {
				t.Fatalf("history = %+v", h)
			}
		})
	}
}

// Cancelling during a running tool aborts it, records an aborted result and
// returns the context's error; the history stays valid.
func TestCancelDuringToolRecordsAborted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []llmtest.Turn{
		llmtest.Stream(llmtest.ToolCallStart(0, "c1", "slow", `{"seconds":30}`), llmtest.ToolCallStart(1, "c2", "current_time", `{}`), llmtest.Finish("tool_calls")),
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ss := f.open(agent.Options{Observer: func(e agent.Event) {
		if e.Type == agent.EventToolCall && e.ToolCall.ID == "c2" {
			time.AfterFunc(50*time.Millisecond, cancel)
		}
	}})
	start := time.Now()
	res, err := ss.Run(ctx, "wait")
	if !errors.Is(err, context.Canceled) || res.Reason != "aborted" {
		t.Fatalf("res=%+v err=%v", res, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("took %v", d)
	}
	recs, _ := agent.ReadJournal(ss.LogPath())
	var codes []string
	for _, r := range recs {
		if r.Type == agent.RecordToolResult {
			codes = append(codes, r.Error.Code)
		}
	}
	if strings.Join(codes, ",") != "ABORTED,ABORTED_BEFORE_DISPATCH" {
		t.Fatalf("codes = %v", codes)
	}
	h := agent.Replay(recs)
	if len(h) != 4 || h[2].Role != llm.RoleTool || h[3].Role != llm.RoleTool {
		t.Fatalf("history = %+v", h)
	}
}

// Resume by id rebuilds the conversation exactly and continues it.
func TestResumeByID(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []llmtest.Turn{
		llmtest.Stream(llmtest.ToolCallStart(0, "c1", "current_time", ""), llmtest.Finish("tool_calls")),
		llmtest.Stream(llmtest.TextDelta("noon"), llmtest.Finish("stop")),
		llmtest.Stream(llmtest.TextDelta("still noon"), llmtest.Finish("stop")),
	})
	ss := f.open(agent.Options{})
	if _, err := ss.Run(context.Background(), "time?"); err != nil {
		t.Fatal(err)
	}
	before := ss.History()
	id := ss.ID()
	if err := ss.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	again := f.open(agent.Options{ID: id})
	if !reflect.DeepEqual(again.History(), before) {
		t.Fatalf("resumed history differs:\n%+v\n%+v", again.History(), before)
	}
	if res, err := again.Run(context.Background(), "and now?"); err != nil || res.Text != "still noon" {
		t.Fatalf("%+v %v", res, err)
	}
	w := f.wire(2)
	if len(w.Messages) != 1+len(before)+1 {
		t.Fatalf("resumed request has %d messages", len(w.Messages))
	}
	list, err := agent.ListSessions(f.state)
	if err != nil || len(list) != 1 || list[0].ID != id || list[0].Turns != 2 || list[0].Title != "time?" {
		t.Fatalf("list = %+v, %v", list, err)
	}
	if _, err := f.svc.Open(context.Background(), agent.Options{ID: "nope"}); !errors.Is(err, agent.ErrSessionNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	if _, err := f.svc.Open(context.Background(), agent.Options{ID: "../../etc/passwd"}); !errors.Is(err, agent.ErrSessionNotFound) {
		t.Fatalf("path id: %v", err)
	}
}

// json.Marshal of an Event is its stream-json line (with "v" since the
// encoding moved into this package; see streamjson_test.go).
func TestStreamEventsMarshal(t *testing.T) {
	t.Parallel()
	e := agent.Event{Type: agent.EventToolCall, SessionID: "s", ToolCall: &agent.ToolCallEvent{ID: "c", Name: "bash", Arguments: "{}"}}
	b, _ := json.Marshal(e)
	if string(b) != `{"v":1,"type":"tool_call","sessionId":"s","toolCall":{"id":"c","name":"bash","arguments":"{}"}}` {
		t.Fatal(string(b))
	}
}

package llmopenai

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/llm/llmtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testConfig is a route against srv with fast retries.
func testConfig(url string) Config {
	var c Config
	c.SetDefaults()
	c.Provider = "deepseek"
	c.BaseURL = url
	c.APIKey = "sk-test"
	c.RetryBaseDelay = Duration(time.Millisecond)
	c.RetryMaxDelay = Duration(2 * time.Second)
	c.Models = []ModelConfig{
		{Name: "deepseek-v4-flash", Default: true, ContextWindow: 1048576, MaxOutputTokens: 393216, Thinking: llm.ThinkingEnabled,
			Aliases: []llm.Alias{{Name: "deepseek-chat", Thinking: llm.ThinkingDisabled}, {Name: "deepseek-reasoner", Thinking: llm.ThinkingEnabled}}},
		{Name: "deepseek-v4-pro", ContextWindow: 1048576, MaxOutputTokens: 393216, Thinking: llm.ThinkingEnabled},
	}
	return c
}

func newAdapter(t *testing.T, cfg Config) *Adapter {
	t.Helper()
	a, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func userRequest(text string) llm.Request {
	return llm.Request{Model: "deepseek-v4-flash", Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}
}

// collect runs the stream, returning the chunks and the folded response.
func collect(t *testing.T, s llm.Stream) ([]llm.Chunk, llm.Response) {
	t.Helper()
	var chunks []llm.Chunk
	var a llm.Assembler
	for c := range s {
		chunks = append(chunks, c)
		a.Add(c)
	}
	checkOrder(t, chunks)
	return chunks, a.Response()
}

// checkOrder asserts the stream contract: exactly one finish, last; usage
// (at most one) after every content chunk; tool-call ends after starts.
func checkOrder(t *testing.T, chunks []llm.Chunk) {
	t.Helper()
	if len(chunks) == 0 || chunks[len(chunks)-1].Kind != llm.ChunkFinish {
		t.Fatalf("stream does not end with a finish: %v", kinds(chunks))
	}
	usageAt := -1
	for i, c := range chunks {
		if c.Kind == llm.ChunkFinish && i != len(chunks)-1 {
			t.Fatalf("finish before the end: %v", kinds(chunks))
		}
		if c.Kind == llm.ChunkUsage {
			if usageAt >= 0 {
				t.Fatalf("two usage chunks: %v", kinds(chunks))
			}
			usageAt = i
		} else if usageAt >= 0 && c.Kind != llm.ChunkFinish {
			t.Fatalf("%s after usage: %v", c.Kind, kinds(chunks))
		}
	}
}

func kinds(chunks []llm.Chunk) []string {
	var out []string
	for _, c := range chunks {
		out = append(out, c.Kind.String())
	}
	return out
}

// b12 is the transcript of bug case B12, variant 1.
var b12 = []string{
	`{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read_file","arguments":""}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"read_file","arguments":"{\"pa"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"a."}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"th\":\"b.txt\"}"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"txt\"}"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":2,"id":"call_c","type":"function","function":{"name":"current_time","arguments":""}}]}}]}`,
	`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
}

func TestB12InterleavedParallelToolCalls(t *testing.T) {
	srv := llmtest.New(t, []llmtest.Turn{llmtest.Stream(b12...)})
	a := newAdapter(t, testConfig(srv.URL))
	chunks, r := collect(t, a.Stream(t.Context(), userRequest("read both")))
	want := []llm.ToolCall{
		{ID: "call_a", Name: "read_file", Arguments: `{"path":"a.txt"}`},
		{ID: "call_b", Name: "read_file", Arguments: `{"path":"b.txt"}`},
		{ID: "call_c", Name: "current_time", Arguments: `{}`},
	}
	if r.Finish != llm.FinishToolCalls || !reflect.DeepEqual(r.Message.ToolCalls, want) {
		t.Fatalf("finish=%q calls=%+v, want %+v", r.Finish, r.Message.ToolCalls, want)
	}
	// Starts carry stable indices in first-seen order; ends come in index order.
	var starts, ends []int
	for _, c := range chunks {
		switch c.Kind {
		case llm.ChunkToolCallStart:
			starts = append(starts, c.Index)
		case llm.ChunkToolCallEnd:
			ends = append(ends, c.Index)
		}
	}
	if !reflect.DeepEqual(starts, []int{0, 1, 2}) || !reflect.DeepEqual(ends, []int{0, 1, 2}) {
		t.Fatalf("starts=%v ends=%v", starts, ends)
	}
	// The history sent back keeps all three calls with "" normalised to "{}".
	srv.Enqueue(llmtest.Stream(llmtest.TextDelta("done"), llmtest.Finish("stop")))
	history := []llm.Message{{Role: llm.RoleUser, Content: "read both"}, r.Message,
		{Role: llm.RoleTool, ToolCallID: "call_a", Content: "A"},
		{Role: llm.RoleTool, ToolCallID: "call_b", Content: "B"},
		{Role: llm.RoleTool, ToolCallID: "call_c", Content: "12:00"}}
	collect(t, a.Stream(t.Context(), llm.Request{Model: "deepseek-v4-flash", Messages: history}))
	w, err := srv.Requests()[1].Wire()
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, tc := range w.Messages[1].ToolCalls {
		args = append(args, tc.ID+" "+tc.Function.Name+" "+tc.Function.Arguments)
	}
	if want := []string{`call_a read_file {"path":"a.txt"}`, `call_b read_file {"path":"b.txt"}`, `call_c current_time {}`}; !reflect.DeepEqual(args, want) {
		t.Fatalf("history tool calls = %q, want %q", args, want)
	}
}

func TestB12Variant2MissingIndexNeverMergesNames(t *testing.T) {
	var events []string
	for _, e := range b12 {
		events = append(events, strings.NewReplacer(`"index":0,"id"`, `"id"`, `"index":1,"id"`, `"id"`, `"index":2,"id"`, `"id"`,
			`{"index":0,"function"`, `{"function"`, `{"index":1,"function"`, `{"function"`).Replace(e))
	}
	for _, e := range events[:6] {
		if strings.Contains(e, `"tool_calls":[{"index"`) {
			t.Fatalf("index left in %s", e)
		}
	}
	srv := llmtest.New(t, []llmtest.Turn{llmtest.Stream(events...)})
	_, r := collect(t, newAdapter(t, testConfig(srv.URL)).Stream(t.Context(), userRequest("x")))
	calls := r.Message.ToolCalls
	if r.Finish != llm.FinishToolCalls || len(calls) != 3 {
		t.Fatalf("finish=%q calls=%+v", r.Finish, calls)
	}
	for i, want := range []struct{ id, name string }{{"call_a", "read_file"}, {"call_b", "read_file"}, {"call_c", "current_time"}} {
		if calls[i].ID != want.id || calls[i].Name != want.name {
			t.Errorf("call %d = %s %s, want %s %s", i, calls[i].ID, calls[i].Name, want.id, want.name)
		}
	}
	// Without indices the interleaved fragments are ambiguous: they land on
	// the open call, whose arguments are then flagged, never silently parsed.
	if calls[1].ArgumentsError == "" {
		t.Errorf("call_b arguments %q: want flagged invalid", calls[1].Arguments)
	}
	if calls[2].Arguments != "{}" || calls[2].ArgumentsError != "" {
		t.Errorf("call_c = %+v, want {}", calls[2])
	}
}

func TestB12Variant3EmptyishAndTruncatedArguments(t *testing.T) {
	tests := []struct {
		name     string
		fragment string // call_c's arguments value, raw JSON
		want     string
		flagged  bool
	}{
		{"whitespace", `"   "`, "{}", false},
		{"null", `null`, "{}", false},
		{"truncated", `"{\"x\":"`, `{"x":`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events := append([]string(nil), b12...)
			events[5] = strings.Replace(events[5], `"arguments":""`, `"arguments":`+tt.fragment, 1)
			srv := llmtest.New(t, []llmtest.Turn{llmtest.Stream(events...)})
			_, r := collect(t, newAdapter(t, testConfig(srv.URL)).Stream(t.Context(), userRequest("x")))
			c := r.Message.ToolCalls[2]
			if c.Arguments != tt.want || (c.ArgumentsError != "") != tt.flagged {
				t.Fatalf("call_c = %+v, want arguments %q flagged=%v", c, tt.want, tt.flagged)
			}
			if tt.flagged && !strings.HasPrefix(c.ArgumentsError, "truncated JSON") {
				t.Fatalf("reason = %q", c.ArgumentsError)
			}
			if r.Message.ToolCalls[0].Arguments != `{"path":"a.txt"}` {
				t.Fatalf("call_a disturbed: %+v", r.Message.ToolCalls[0])
			}
		})
	}
}

func TestB14ReasoningContentRoundTrip(t *testing.T) {
	srv := llmtest.New(t, []llmtest.Turn{
		llmtest.Stream(
			`{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":"Need the file "}}]}`,
			`{"choices":[{"index":0,"delta":{"reasoning_content":"first."}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_r1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"notes.txt\"}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`),
		llmtest.Stream(llmtest.ReasoningDelta("It says hello."), llmtest.TextDelta("The file says hello."), llmtest.Finish("stop")),
		llmtest.Stream(llmtest.TextDelta("Bye."), llmtest.Finish("stop")),
	}, llmtest.WithCheck(llmtest.DeepSeekReasoningCheck))
	a := newAdapter(t, testConfig(srv.URL))

	history := []llm.Message{{Role: llm.RoleUser, Content: "what is in notes.txt?"}}
	chunks, r1 := collect(t, a.Stream(t.Context(), llm.Request{Model: "deepseek-v4-flash", Messages: history}))
	if r1.Message.Reasoning != "Need the file first." || r1.Message.Content != "" {
		t.Fatalf("turn 1 reasoning=%q content=%q", r1.Message.Reasoning, r1.Message.Content)
	}
	if chunks[0].Kind != llm.ChunkReasoning {
		t.Fatalf("reasoning is not streamed as its own channel: %v", kinds(chunks))
	}
	history = append(history, r1.Message, llm.Message{Role: llm.RoleTool, ToolCallID: "call_r1", Content: "hello"})
	_, r2 := collect(t, a.Stream(t.Context(), llm.Request{Model: "deepseek-v4-flash", Messages: history}))
	if r2.Err != nil {
		t.Fatalf("request 2 failed: %v", r2.Err)
	}
	history = append(history, r2.Message, llm.Message{Role: llm.RoleUser, Content: "thanks"})
	_, r3 := collect(t, a.Stream(t.Context(), llm.Request{Model: "deepseek-v4-flash", Messages: history}))
	if r3.Err != nil || r3.Message.Content != "Bye." {
		t.Fatalf("request 3: %+v", r3)
	}

	reqs := srv.Requests()
	for i, n := range []int{1, 2} {
		var raw struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(reqs[n].Body, &raw); err != nil {
			t.Fatal(err)
		}
		var asst, tool map[string]any
		_ = json.Unmarshal(raw.Messages[1], &asst)
		_ = json.Unmarshal(raw.Messages[2], &tool)
		if asst["role"] != "assistant" || asst["reasoning_content"] != "Need the file first." || asst["content"] != nil {
			t.Errorf("request %d assistant = %s", i+2, raw.Messages[1])
		}
		if _, present := asst["content"]; !present {
			t.Errorf("request %d: content should be present as null: %s", i+2, raw.Messages[1])
		}
		calls, _ := asst["tool_calls"].([]any)
		if len(calls) != 1 || !strings.Contains(string(raw.Messages[1]), `"id":"call_r1"`) {
			t.Errorf("request %d tool_calls = %v", i+2, calls)
		}
		if tool["role"] != "tool" || tool["tool_call_id"] != "call_r1" || tool["content"] != "hello" {
			t.Errorf("request %d tool message = %s", i+2, raw.Messages[2])
		}
	}
	// The turn without tool calls leaves its reasoning out.
	w3, _ := reqs[2].Wire()
	if m := w3.Messages[3]; m.Role != "assistant" || m.ReasoningContent != nil || m.Text() != "The file says hello." {
		t.Errorf("request 3 message 3 = %+v", m)
	}
}

func TestB14CheckRejectsHistoryWithoutReasoning(t *testing.T) {
	srv := llmtest.New(t, nil, llmtest.WithCheck(llmtest.DeepSeekReasoningCheck))
	a := newAdapter(t, testConfig(srv.URL))
	_, r := collect(t, a.Stream(t.Context(), llm.Request{Model: "deepseek-v4-flash", Messages: []llm.Message{
		{Role: llm.RoleUser, Content: "x"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c", Name: "read_file", Arguments: "{}"}}},
		{Role: llm.RoleTool, ToolCallID: "c", Content: "hello"},
	}, Options: llm.Options{Thinking: llm.ThinkingDisabled}})) // no reasoning and no thinking: the field is left out
	if r.Err == nil || r.Err.Status != 400 || r.Err.Code != llm.CodeProtocol ||
		!strings.Contains(r.Err.Message, "Missing `reasoning_content` field in the assistant message at message index 1") {
		t.Fatalf("err = %v", r.Err)
	}
}

func TestReasoningFieldFromOllamaAndVLLM(t *testing.T) {
	srv := llmtest.New(t, []llmtest.Turn{llmtest.Stream(
		llmtest.ReasoningFieldDelta("think "), llmtest.ReasoningFieldDelta("hard"), llmtest.TextDelta("answer"), llmtest.Finish("stop"))})
	_, r := collect(t, newAdapter(t, testConfig(srv.URL)).Stream(t.Context(), userRequest("q")))
	if r.Message.Reasoning != "think hard" || r.Message.Content != "answer" || r.Finish != llm.FinishStop {
		t.Fatalf("got %+v", r)
	}
}

// B23 usage shapes: on the finish chunk (DeepSeek), in a usage-only chunk
// after it (OpenAI, vLLM, Ollama), cumulatively on every chunk (keep last).
func TestB23UsageShapes(t *testing.T) {
	ds := llmtest.Usage{PromptTokens: 98716, CompletionTokens: 78, TotalTokens: 98794,
		PromptCacheHitTokens: 98432, PromptCacheMissTokens: 284, CompletionDetails: &llmtest.TokenDetails{ReasoningTokens: 40}}
	wantDS := llm.Usage{PromptTokens: 98716, CompletionTokens: 78, TotalTokens: 98794, CacheHitTokens: 98432, CacheMissTokens: 284, ReasoningTokens: 40}
	oa := llmtest.Usage{PromptTokens: 1000, CompletionTokens: 20, TotalTokens: 1020, PromptTokensDetails: &llmtest.TokenDetails{CachedTokens: 768}}
	wantOA := llm.Usage{PromptTokens: 1000, CompletionTokens: 20, TotalTokens: 1020, CacheHitTokens: 768, CacheMissTokens: 232}
	cumulative := func(p, c int64) string {
		return `{"choices":[{"index":0,"delta":{"content":"x"}}],"usage":{"prompt_tokens":` + itoa(p) + `,"completion_tokens":` + itoa(c) + `,"total_tokens":` + itoa(p+c) + `}}`
	}
	tests := []struct {
		name   string
		events []string
		want   *llm.Usage
	}{
		{"deepseek usage on the finish chunk", []string{llmtest.TextDelta("hi"), llmtest.FinishWithUsage("stop", ds)}, &wantDS},
		{"openai usage-only final chunk", []string{llmtest.TextDelta("hi"), llmtest.Finish("stop"), llmtest.UsageOnly(oa)}, &wantOA},
		{"cumulative usage keeps the last", []string{cumulative(10, 1), cumulative(10, 2), cumulative(10, 3), llmtest.Finish("stop")},
			&llm.Usage{PromptTokens: 10, CompletionTokens: 3, TotalTokens: 13, CacheMissTokens: 10}},
		{"no usage is not reported", []string{llmtest.TextDelta("hi"), llmtest.Finish("stop")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t, []llmtest.Turn{llmtest.Stream(tt.events...)})
			chunks, r := collect(t, newAdapter(t, testConfig(srv.URL)).Stream(t.Context(), userRequest("q")))
			if tt.want == nil {
				if r.UsageReported {
					t.Fatalf("usage reported: %+v", r.Usage)
				}
				return
			}
			if !r.UsageReported || r.Usage != *tt.want {
				t.Fatalf("usage = %+v (reported %v), want %+v", r.Usage, r.UsageReported, *tt.want)
			}
			if chunks[len(chunks)-2].Kind != llm.ChunkUsage {
				t.Fatalf("usage is not right before finish: %v", kinds(chunks))
			}
		})
	}
	// The request asks for usage.
	srv := llmtest.New(t, []llmtest.Turn{llmtest.Stream(llmtest.Finish("stop"))})
	collect(t, newAdapter(t, testConfig(srv.URL)).Stream(t.Context(), userRequest("q")))
	w, _ := srv.Requests()[0].Wire()
	if string(w.StreamOptions) != `{"include_usage":true}` || !w.Stream {
		t.Fatalf("stream=%v stream_options=%s", w.Stream, w.StreamOptions)
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestRequestCarriesModelThinkingToolsAndAuth(t *testing.T) {
	srv := llmtest.New(t, []llmtest.Turn{
		llmtest.Stream(llmtest.Finish("stop")), llmtest.Stream(llmtest.Finish("stop")), llmtest.Stream(llmtest.Finish("stop")),
	})
	cfg := testConfig(srv.URL)
	cfg.Headers = map[string]string{"X-Team": "harness"}
	cfg.Models[0].ReasoningEffort = "high"
	a := newAdapter(t, cfg)
	req := userRequest("q")
	req.Tools = []llm.ToolSchema{
		{Name: "read_file", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		{Name: "current_time"},
	}
	collect(t, a.Stream(t.Context(), req))
	req.Model = "deepseek-chat"
	collect(t, a.Stream(t.Context(), req))
	req.Model = "deepseek-v4-pro"
	req.Options = llm.Options{Thinking: llm.ThinkingDisabled, MaxOutputTokens: 1000}
	collect(t, a.Stream(t.Context(), req))

	reqs := srv.Requests()
	w0, _ := reqs[0].Wire()
	if w0.Model != "deepseek-v4-flash" || w0.Thinking == nil || w0.Thinking.Type != "enabled" || w0.ReasoningEffort != "high" || w0.MaxTokens != nil {
		t.Errorf("request 1: model=%s thinking=%+v effort=%q max=%v", w0.Model, w0.Thinking, w0.ReasoningEffort, w0.MaxTokens)
	}
	if len(w0.Tools) != 2 || w0.Tools[0].Function.Name != "read_file" || w0.Tools[0].Type != "function" ||
		!strings.Contains(string(w0.Tools[0].Function.Parameters), `"required":["path"]`) ||
		string(w0.Tools[1].Function.Parameters) != `{"properties":{},"type":"object"}` {
		t.Errorf("tools = %+v", w0.Tools)
	}
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization = %q", got)
	}
	if got := reqs[0].Header.Get("X-Team"); got != "harness" {
		t.Errorf("X-Team = %q", got)
	}
	if reqs[0].Path != "/v1/chat/completions" {
		t.Errorf("path = %q", reqs[0].Path)
	}
	w1, _ := reqs[1].Wire()
	if w1.Model != "deepseek-v4-flash" || w1.Thinking == nil || w1.Thinking.Type != "disabled" || w1.ReasoningEffort != "" {
		t.Errorf("alias deepseek-chat: model=%s thinking=%+v effort=%q", w1.Model, w1.Thinking, w1.ReasoningEffort)
	}
	w2, _ := reqs[2].Wire()
	if w2.Model != "deepseek-v4-pro" || w2.Thinking == nil || w2.Thinking.Type != "disabled" || w2.MaxTokens == nil || *w2.MaxTokens != 1000 {
		t.Errorf("override: model=%s thinking=%+v max=%v", w2.Model, w2.Thinking, w2.MaxTokens)
	}
}

func TestUnsupportedOptionFailsBeforeAnyRequest(t *testing.T) {
	srv := llmtest.New(t, nil)
	cfg := testConfig(srv.URL)
	cfg.Models = []ModelConfig{{Name: "qwen3"}}
	req := llm.Request{Model: "qwen3", Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}, Options: llm.Options{Thinking: llm.ThinkingEnabled}}
	_, r := collect(t, newAdapter(t, cfg).Stream(t.Context(), req))
	if r.Finish != llm.FinishError || r.Err.Code != llm.CodeUnsupportedOption || len(srv.Requests()) != 0 {
		t.Fatalf("finish=%q err=%v requests=%d", r.Finish, r.Err, len(srv.Requests()))
	}
}

func TestHTTPErrorsAndRetries(t *testing.T) {
	ok := llmtest.Stream(llmtest.TextDelta("fine"), llmtest.Finish("stop"))
	tests := []struct {
		name     string
		turns    []llmtest.Turn
		retries  int
		code     llm.Code // "" = success
		status   int
		requests int
		msg      string
	}{
		{"401 is AUTH, not retried", []llmtest.Turn{llmtest.Error(401, "Authentication Fails, Your api key: ****abcd is invalid")}, 3, llm.CodeAuth, 401, 1,
			`the endpoint rejected the API key: Authentication Fails, Your api key: ****abcd is invalid (the key is config field apiKey of the llm-openai row for provider "deepseek")`},
		{"429 then success", []llmtest.Turn{llmtest.Error(429, "Rate limit reached"), ok}, 3, "", 0, 2, ""},
		{"500 twice then success", []llmtest.Turn{llmtest.Error(500, "boom"), llmtest.Error(503, "busy"), ok}, 3, "", 0, 3, ""},
		{"429 until retries run out", []llmtest.Turn{llmtest.Error(429, "slow down"), llmtest.Error(429, "slow down"), llmtest.Error(429, "slow down")}, 2, llm.CodeRateLimit, 429, 3, "slow down"},
		{"connection reset before output then success", []llmtest.Turn{{Drop: true}, ok}, 3, "", 0, 2, ""},
		{"context length", []llmtest.Turn{llmtest.Error(400, "This model's maximum context length is 1048576 tokens. However, you requested 1200000 tokens.")}, 3, llm.CodeContextLength, 400, 1, "maximum context length"},
		{"other 400 is PROTOCOL", []llmtest.Turn{llmtest.Error(400, "Invalid tool schema")}, 3, llm.CodeProtocol, 400, 1, "Invalid tool schema"},
		{"in-stream error event", []llmtest.Turn{llmtest.Stream(`{"error":{"message":"overloaded","type":"server_error"}}`)}, 0, llm.CodeServer, 0, 1, "overloaded"},
		{"malformed event is PROTOCOL", []llmtest.Turn{llmtest.Stream(`{not json`)}, 0, llm.CodeProtocol, 0, 1, "malformed"},
		{"stream without finish_reason is PROTOCOL", []llmtest.Turn{llmtest.Stream(llmtest.TextDelta("half"))}, 0, llm.CodeProtocol, 0, 1, "without a finish_reason"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.New(t, tt.turns)
			cfg := testConfig(srv.URL)
			cfg.MaxRetries = &tt.retries
			_, r := collect(t, newAdapter(t, cfg).Stream(t.Context(), userRequest("q")))
			if got := len(srv.Requests()); got != tt.requests {
				t.Errorf("requests = %d, want %d", got, tt.requests)
			}
			if tt.code == "" {
				if r.Err != nil || r.Message.Content != "fine" {
					t.Fatalf("want success, got finish=%q err=%v", r.Finish, r.Err)
				}
				return
			}
			if r.Finish != llm.FinishError || r.Err == nil || r.Err.Code != tt.code || r.Err.Status != tt.status || !strings.Contains(r.Err.Message, tt.msg) {
				t.Fatalf("finish=%q err=%#v, want code %s status %d containing %q", r.Finish, r.Err, tt.code, tt.status, tt.msg)
			}
		})
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	srv := llmtest.New(t, []llmtest.Turn{
		llmtest.Error(429, "wait").RetryAfter("1"),
		llmtest.Stream(llmtest.TextDelta("fine"), llmtest.Finish("stop")),
	})
	a := newAdapter(t, testConfig(srv.URL))
	var slept []time.Duration
	a.sleep = func(ctx context.Context, d time.Duration) error { slept = append(slept, d); return nil }
	_, r := collect(t, a.Stream(t.Context(), userRequest("q")))
	if r.Err != nil || !reflect.DeepEqual(slept, []time.Duration{time.Second}) {
		t.Fatalf("err=%v slept=%v, want one 1s wait", r.Err, slept)
	}
	// A Retry-After beyond retryMaxDelay makes the error final at once.
	srv2 := llmtest.New(t, []llmtest.Turn{llmtest.Error(429, "come back tomorrow").RetryAfter("86400")})
	_, r = collect(t, newAdapter(t, testConfig(srv2.URL)).Stream(t.Context(), userRequest("q")))
	if r.Err == nil || r.Err.Code != llm.CodeRateLimit || r.Err.RetryAfter != 24*time.Hour || len(srv2.Requests()) != 1 {
		t.Fatalf("err=%#v requests=%d", r.Err, len(srv2.Requests()))
	}
}

func TestBackoffIsExponentialWithJitter(t *testing.T) {
	a := &Adapter{cfg: Config{RetryBaseDelay: Duration(100 * time.Millisecond), RetryMaxDelay: Duration(time.Second)}}
	for attempt, ceil := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
		ceil *= time.Millisecond
		for range 50 {
			d, ok := a.backoff(attempt, &llm.Error{Code: llm.CodeServer})
			if !ok || d < ceil/2 || d > ceil {
				t.Fatalf("attempt %d: delay %v outside [%v, %v]", attempt, d, ceil/2, ceil)
			}
		}
	}
}

func TestRetryAfterHeaderForms(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"2"}}, 2 * time.Second},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(3 * time.Second).Format(http.TimeFormat)}}, 3 * time.Second},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{}, 0},
	}
	for _, tt := range tests {
		if got := retryAfter(tt.h, now); got != tt.want {
			t.Errorf("%v: got %v, want %v", tt.h, got, tt.want)
		}
	}
}

func TestStreamCutMidwayIsNetworkErrorWithoutRetry(t *testing.T) {
	srv := llmtest.New(t, []llmtest.Turn{
		{Events: []string{llmtest.TextDelta("partial ")}, Drop: true},
		llmtest.Stream(llmtest.TextDelta("should not be requested"), llmtest.Finish("stop")),
	})
	_, r := collect(t, newAdapter(t, testConfig(srv.URL)).Stream(t.Context(), userRequest("q")))
	if r.Finish != llm.FinishError || r.Err.Code != llm.CodeNetwork || r.Message.Content != "partial " {
		t.Fatalf("finish=%q err=%v content=%q", r.Finish, r.Err, r.Message.Content)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("requests = %d: output had been streamed, so no retry", n)
	}
}

func TestCompleteStreamWithoutDoneIsAccepted(t *testing.T) {
	srv := llmtest.New(t, []llmtest.Turn{{Events: []string{llmtest.TextDelta("all"), llmtest.Finish("stop")}, OmitDone: true}})
	_, r := collect(t, newAdapter(t, testConfig(srv.URL)).Stream(t.Context(), userRequest("q")))
	if r.Err != nil || r.Finish != llm.FinishStop || r.Message.Content != "all" {
		t.Fatalf("finish=%q err=%v", r.Finish, r.Err)
	}
}

func TestCancellationFinishesAborted(t *testing.T) {
	srv := llmtest.New(t, []llmtest.Turn{llmtest.Stream(llmtest.TextDelta("a"), llmtest.TextDelta("b"), llmtest.Finish("stop"))})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var chunks []llm.Chunk
	for c := range newAdapter(t, testConfig(srv.URL)).Stream(ctx, userRequest("q")) {
		chunks = append(chunks, c)
		if c.Kind == llm.ChunkText {
			cancel()
		}
	}
	checkOrder(t, chunks)
	last := chunks[len(chunks)-1]
	if last.Finish != llm.FinishAborted || last.Err.Code != llm.CodeAborted || !errors.Is(last.Err, context.Canceled) {
		t.Fatalf("last = %+v", last)
	}
}

func TestConsumerStoppingEarlyEndsTheRequest(t *testing.T) {
	srv := llmtest.New(t, []llmtest.Turn{llmtest.Stream(llmtest.TextDelta("a"), llmtest.TextDelta("b"), llmtest.Finish("stop"))})
	n := 0
	for range newAdapter(t, testConfig(srv.URL)).Stream(t.Context(), userRequest("q")) {
		n++
		break
	}
	if n != 1 {
		t.Fatalf("n = %d", n)
	}
}

func TestIdleTimeoutIsNetworkError(t *testing.T) {
	srv := llmtest.New(t, []llmtest.Turn{
		{Events: []string{llmtest.TextDelta("thinking...")}, Stall: true},
		{Stall: true}, // silent before any output: retried once, then final
		{Stall: true},
	})
	cfg := testConfig(srv.URL)
	cfg.Timeout = Duration(150 * time.Millisecond)
	_, r := collect(t, newAdapter(t, cfg).Stream(t.Context(), userRequest("q")))
	if r.Finish != llm.FinishError || r.Err.Code != llm.CodeNetwork || !strings.Contains(r.Err.Message, "no data") || len(srv.Requests()) != 1 {
		t.Fatalf("mid-stream stall: finish=%q err=%v requests=%d", r.Finish, r.Err, len(srv.Requests()))
	}
	one := 1
	cfg.MaxRetries = &one
	_, r = collect(t, newAdapter(t, cfg).Stream(t.Context(), userRequest("q")))
	if r.Err == nil || r.Err.Code != llm.CodeNetwork || len(srv.Requests()) != 3 {
		t.Fatalf("silent endpoint: err=%v requests=%d", r.Err, len(srv.Requests()))
	}
}

func TestMissingAPIKeyNamesTheVariable(t *testing.T) {
	cfg := testConfig("https://api.deepseek.com")
	cfg.APIKey = ""
	cfg.APIKeyEnv = "HARNESS_TEST_NO_SUCH_KEY"
	t.Setenv("HARNESS_TEST_NO_SUCH_KEY", "")
	a, err := New(cfg, nil)
	if err != nil {
		t.Fatalf("New without a key must build the adapter: %v", err)
	}
	_, r := collect(t, a.Stream(t.Context(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}}))
	le, ok := llm.AsError(r.Err)
	if !ok || le.Code != llm.CodeAuth || !errors.Is(r.Err, llm.ErrMissingAPIKey) ||
		!strings.Contains(r.Err.Error(), "set the environment variable HARNESS_TEST_NO_SUCH_KEY") || !strings.Contains(r.Err.Error(), "apiKey") {
		t.Fatalf("stream error = %v", r.Err)
	}
	t.Setenv("HARNESS_TEST_NO_SUCH_KEY", "sk-from-env")
	if a, err := New(cfg, nil); err != nil || a.KeyError() != nil {
		t.Fatalf("with the variable set: %v %v", err, a.KeyError())
	}
}

func TestLocalRouteNeedsNoKeyAndSendsNoAuthorization(t *testing.T) {
	srv := llmtest.New(t, []llmtest.Turn{llmtest.Stream(llmtest.TextDelta("hi"), llmtest.Finish("stop"))})
	cfg := testConfig(srv.URL) // httptest listens on 127.0.0.1
	cfg.Provider, cfg.APIKey = "local", ""
	cfg.Models = []ModelConfig{{Name: "qwen3"}}
	a := newAdapter(t, cfg)
	_, r := collect(t, a.Stream(t.Context(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}}))
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	if got := srv.Requests()[0].Header.Get("Authorization"); got != "" {
		t.Fatalf("Authorization = %q, want none", got)
	}
}

func TestConfigValidateNamesFields(t *testing.T) {
	cfg := testConfig("ftp://x")
	cfg.Provider = "a/b"
	cfg.Models = append(cfg.Models, ModelConfig{Name: "deepseek-chat", Default: true, Thinking: "sometimes"})
	err := cfg.Validate()
	if err == nil {
		t.Fatal("want errors")
	}
	for _, want := range []string{"provider:", "baseURL:", `models[2].name: name "deepseek-chat" already used by models[0].aliases[0].name`,
		"models[2].thinking:", "models: 2 models are marked default"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestAnyModelPassesUnlistedNamesThrough(t *testing.T) {
	srv := llmtest.New(t, []llmtest.Turn{llmtest.Stream(llmtest.TextDelta("hi"), llmtest.Finish("stop"))})
	cfg := testConfig(srv.URL)
	cfg.Provider, cfg.Models = "local", []ModelConfig{{Name: "qwen3"}}
	a := newAdapter(t, cfg)
	if _, ok := a.ResolveModel("llama3.2:1b"); ok {
		t.Fatal("unlisted model resolved without anyModel")
	}
	cfg.AnyModel = true
	a = newAdapter(t, cfg)
	svc := llm.NewService()
	if _, err := svc.Register(a); err != nil {
		t.Fatal(err)
	}
	_, r := collect(t, svc.Stream(t.Context(), llm.Request{Model: "local/llama3.2:1b", Messages: []llm.Message{{Role: llm.RoleUser, Content: "q"}}}))
	w, _ := srv.Requests()[0].Wire()
	if r.Err != nil || w.Model != "llama3.2:1b" {
		t.Fatalf("err=%v model=%q", r.Err, w.Model)
	}
}

func TestOpenAIEnvironmentVariablesNeverReachTheEndpoint(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-openai-leak")
	t.Setenv("OPENAI_ORG_ID", "org-leak")
	t.Setenv("OPENAI_PROJECT_ID", "proj-leak")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Leak: yes")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	srv := llmtest.New(t, []llmtest.Turn{llmtest.Stream(llmtest.Finish("stop")), llmtest.Stream(llmtest.Finish("stop"))})
	cfg := testConfig(srv.URL)
	_, r := collect(t, newAdapter(t, cfg).Stream(t.Context(), userRequest("q")))
	cfg.Provider, cfg.APIKey = "local", ""
	_, r2 := collect(t, newAdapter(t, cfg).Stream(t.Context(), userRequest("q")))
	if r.Err != nil || r2.Err != nil {
		t.Fatalf("errors: %v, %v", r.Err, r2.Err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d (OPENAI_BASE_URL must not redirect)", len(reqs))
	}
	for i, want := range []string{"Bearer sk-test", ""} {
		h := reqs[i].Header
		if h.Get("Authorization") != want || h.Get("OpenAI-Organization") != "" || h.Get("OpenAI-Project") != "" || h.Get("X-Leak") != "" {
			t.Errorf("request %d headers leak the environment: %v", i+1, h)
		}
	}
}

func TestLLMTestTurnBuilders(t *testing.T) {
	srv := llmtest.New(t, []llmtest.Turn{
		llmtest.Calls(
			llmtest.Call{ID: "c1", Name: "grep", Args: `{"pattern":"func main","path":"."}`},
			llmtest.Call{ID: "c2", Name: "current_time"},
			llmtest.Call{ID: "c3", Name: "read", Args: `{"path":"héllo wörld.txt"}`},
		).WithReasoning("Search first, then read.").WithUsage(llmtest.Usage{PromptTokens: 50, CompletionTokens: 5, TotalTokens: 55}),
		llmtest.Reply("All done: the answer is 42, naïvely."),
	})
	a := newAdapter(t, testConfig(srv.URL))
	_, r := collect(t, a.Stream(t.Context(), userRequest("q")))
	want := []llm.ToolCall{
		{ID: "c1", Name: "grep", Arguments: `{"pattern":"func main","path":"."}`},
		{ID: "c2", Name: "current_time", Arguments: "{}"},
		{ID: "c3", Name: "read", Arguments: `{"path":"héllo wörld.txt"}`},
	}
	if !reflect.DeepEqual(r.Message.ToolCalls, want) || r.Message.Reasoning != "Search first, then read." || r.Usage.TotalTokens != 55 {
		t.Fatalf("got %+v", r)
	}
	_, r = collect(t, a.Stream(t.Context(), userRequest("q")))
	if r.Message.Content != "All done: the answer is 42, naïvely." || r.Finish != llm.FinishStop {
		t.Fatalf("got %+v", r)
	}
}

func TestUsageNormalisation(t *testing.T) {
	tests := []struct {
		name, raw string
		want      llm.Usage
	}{
		{"deepseek B23", `{"prompt_tokens":98716,"completion_tokens":78,"total_tokens":98794,"prompt_cache_hit_tokens":98432,"prompt_cache_miss_tokens":284,"completion_tokens_details":{"reasoning_tokens":40}}`,
			llm.Usage{PromptTokens: 98716, CompletionTokens: 78, TotalTokens: 98794, CacheHitTokens: 98432, CacheMissTokens: 284, ReasoningTokens: 40}},
		{"openai cached_tokens wins over prompt_cache_hit_tokens", `{"prompt_tokens":100,"completion_tokens":1,"total_tokens":101,"prompt_cache_hit_tokens":10,"prompt_tokens_details":{"cached_tokens":64}}`,
			llm.Usage{PromptTokens: 100, CompletionTokens: 1, TotalTokens: 101, CacheHitTokens: 64, CacheMissTokens: 36}},
		{"details without cached_tokens fall back", `{"prompt_tokens":100,"completion_tokens":1,"prompt_cache_hit_tokens":10,"prompt_tokens_details":{}}`,
			llm.Usage{PromptTokens: 100, CompletionTokens: 1, TotalTokens: 101, CacheHitTokens: 10, CacheMissTokens: 90}},
		{"hits clamped to prompt", `{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6,"prompt_cache_hit_tokens":9}`,
			llm.Usage{PromptTokens: 5, CompletionTokens: 1, TotalTokens: 6, CacheHitTokens: 5}},
		{"no cache figures", `{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9}`,
			llm.Usage{PromptTokens: 7, CompletionTokens: 2, TotalTokens: 9, CacheMissTokens: 7}},
	}
	for _, tt := range tests {
		var w wireUsage
		if err := json.Unmarshal([]byte(tt.raw), &w); err != nil {
			t.Fatal(err)
		}
		if got := w.usage(); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// A server that ignores stream=true answers with one chat.completion; the
// chunk contract is the same.
func TestNonStreamedJSONResponseIsTranslated(t *testing.T) {
	srv := httptestJSON(t, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Reading.","reasoning_content":"need it","tool_calls":[`+
		`{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}},`+
		`{"id":"c2","type":"function","function":{"name":"current_time","arguments":""}}]},"finish_reason":"tool_calls"}],`+
		`"usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13}}`)
	chunks, r := collect(t, newAdapter(t, testConfig(srv)).Stream(t.Context(), userRequest("q")))
	want := []llm.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"a"}`}, {ID: "c2", Name: "current_time", Arguments: "{}"}}
	if r.Err != nil || r.Message.Content != "Reading." || r.Message.Reasoning != "need it" || !reflect.DeepEqual(r.Message.ToolCalls, want) ||
		r.Finish != llm.FinishToolCalls || r.Usage.TotalTokens != 13 {
		t.Fatalf("got %+v (%v)", r, kinds(chunks))
	}
}

func httptestJSON(t *testing.T, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// In thinking mode a tool-call turn whose reasoning was empty still carries
// the field (DeepSeek checks presence); without thinking it is left out.
func TestEmptyReasoningOnToolCallTurns(t *testing.T) {
	srv := llmtest.New(t, []llmtest.Turn{llmtest.Reply("ok"), llmtest.Reply("ok")})
	a := newAdapter(t, testConfig(srv.URL))
	history := []llm.Message{{Role: llm.RoleUser, Content: "x"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c", Name: "current_time", Arguments: "{}"}}},
		{Role: llm.RoleTool, ToolCallID: "c", Content: "noon"}}
	for _, thinking := range []llm.Thinking{llm.ThinkingEnabled, llm.ThinkingDisabled} {
		_, r := collect(t, a.Stream(t.Context(), llm.Request{Model: "deepseek-v4-flash", Messages: history, Options: llm.Options{Thinking: thinking}}))
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	w1, _ := srv.Requests()[0].Wire()
	w2, _ := srv.Requests()[1].Wire()
	if rc := w1.Messages[1].ReasoningContent; rc == nil || *rc != "" {
		t.Errorf("thinking: reasoning_content = %v, want present and empty", rc)
	}
	if rc := w2.Messages[1].ReasoningContent; rc != nil {
		t.Errorf("no thinking: reasoning_content = %q, want absent", *rc)
	}
}

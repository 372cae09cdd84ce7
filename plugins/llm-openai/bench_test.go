package llmopenai

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tidwall/sjson"

	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// benchTurn is a realistic reply: 200 reasoning deltas, 300 text deltas and
// two interleaved tool calls of 50 fragments each, then usage.
func benchTurn() (llmtest.Turn, int) {
	var ev []string
	for i := range 200 {
		ev = append(ev, llmtest.ReasoningDelta(fmt.Sprintf("step %d of the plan. ", i)))
	}
	for i := range 300 {
		ev = append(ev, llmtest.TextDelta(fmt.Sprintf("word%d ", i)))
	}
	ev = append(ev, llmtest.ToolCallStart(0, "call_a", "read_file", ""), llmtest.ToolCallStart(1, "call_b", "grep", ""))
	ev = append(ev, llmtest.ToolCallArgs(0, `{"path":"`), llmtest.ToolCallArgs(1, `{"pattern":"`))
	for range 48 {
		ev = append(ev, llmtest.ToolCallArgs(0, "dir/"), llmtest.ToolCallArgs(1, "ab"))
	}
	ev = append(ev, llmtest.ToolCallArgs(0, `x.go"}`), llmtest.ToolCallArgs(1, `"}`))
	ev = append(ev, llmtest.FinishWithUsage("tool_calls", llmtest.Usage{PromptTokens: 5000, CompletionTokens: 900, TotalTokens: 5900, PromptCacheHitTokens: 4096, PromptCacheMissTokens: 904}))
	size := 0
	for _, e := range ev {
		size += len("data: ") + len(e) + 2
	}
	return llmtest.Stream(ev...), size
}

// BenchmarkStream measures the adapter end to end over loopback HTTP: request
// marshalling, SSE decoding, translation and assembly. MB/s is SSE bytes.
func BenchmarkStream(b *testing.B) {
	turn, size := benchTurn()
	srv := llmtest.New(b, nil)
	cfg := testConfig(srv.URL)
	a, err := New(cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	req := userRequest(strings.Repeat("context ", 100))
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		srv.Enqueue(turn)
		r := llm.Collect(a.Stream(b.Context(), req))
		if r.Err != nil || len(r.Message.ToolCalls) != 2 {
			b.Fatalf("err=%v calls=%d", r.Err, len(r.Message.ToolCalls))
		}
	}
}

// BenchmarkRequestBody measures the request body for a 50-message history
// with 20 tools (the agent-step shape of issue 9): the hand-written encoder
// the adapter uses against openai-go's params encoder (the reference it
// replaced, producing the same bytes), in the same run.
func BenchmarkRequestBody(b *testing.B) {
	req := llm.Request{Model: "m"}
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleSystem, Content: strings.Repeat("system prompt ", 200)})
	for i := range 49 {
		switch i % 3 {
		case 0:
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: "please fix the test"})
		case 1:
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Reasoning: "look first", ToolCalls: []llm.ToolCall{{ID: fmt.Sprint("c", i), Name: "read", Arguments: `{"path":"a.go"}`}}})
		default:
			req.Messages = append(req.Messages, llm.Message{Role: llm.RoleTool, ToolCallID: fmt.Sprint("c", i-1), Content: strings.Repeat("line of code\n", 50)})
		}
	}
	for i := range 20 {
		req.Tools = append(req.Tools, llm.ToolSchema{Name: fmt.Sprint("tool", i), Description: "does things",
			Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"}},"required":["path"]}`)})
	}
	b.Run("encodeRequest", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := encodeRequest("m", req, llm.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("openai-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, err := buildParams("m", req, llm.Options{})
			if err != nil {
				b.Fatal(err)
			}
			body, err := p.MarshalJSON()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := sjson.SetBytes(body, "stream", true); err != nil {
				b.Fatal(err)
			}
		}
	})
}

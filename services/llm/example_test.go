package llm_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/dshgo/harness/core"
	llmopenai "github.com/dshgo/harness/plugins/llm-openai"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// One agent step: mount the llm service and an adapter route, stream a
// request, show chunks as they arrive, fold them into the assistant message
// and build the next request from it.
func Example() {
	ctx := context.Background()
	// A scripted OpenAI-compatible endpoint (use llmtest.New(t, ...) in tests).
	srv := llmtest.NewServer([]llmtest.Turn{llmtest.Stream(
		llmtest.ReasoningDelta("The user wants the notes. "),
		llmtest.ToolCallStart(0, "call_1", "read_file", `{"path":`),
		llmtest.ToolCallArgs(0, `"notes.txt"}`),
		llmtest.FinishWithUsage("tool_calls", llmtest.Usage{
			PromptTokens: 1200, CompletionTokens: 30, TotalTokens: 1230,
			PromptCacheHitTokens: 1024, PromptCacheMissTokens: 176}),
	)})
	defer srv.Close()

	root := core.NewRoot(core.WithLogger(slog.New(slog.DiscardHandler)))
	defer func() { _ = root.Dispose(ctx) }()
	_ = root.Context().Plugin(llm.Plugin, nil).Await(ctx)

	var route llmopenai.Config
	route.SetDefaults()
	route.Provider, route.BaseURL = "local", srv.URL // loopback: no API key needed
	route.Models = []llmopenai.ModelConfig{{Name: "qwen3", ContextWindow: 40960}}
	if err := root.Context().Plugin(llmopenai.Plugin, &route).Await(ctx); err != nil {
		fmt.Println(err)
		return
	}

	svc, _ := core.Lookup(root.Context(), llm.Key)
	req := llm.Request{
		Model:    "local/qwen3",
		Messages: []llm.Message{{Role: llm.RoleSystem, Content: "You are terse."}, {Role: llm.RoleUser, Content: "What is in notes.txt?"}},
		Tools:    []llm.ToolSchema{{Name: "read_file", Description: "Read a file.", Parameters: []byte(`{"type":"object","properties":{"path":{"type":"string"}}}`)}},
	}
	var asm llm.Assembler
	for c := range svc.Stream(ctx, req) {
		asm.Add(c)
		switch c.Kind {
		case llm.ChunkReasoning:
			fmt.Printf("reasoning %q\n", c.Text)
		case llm.ChunkToolCallStart:
			fmt.Printf("tool call %d: %s %s\n", c.Index, c.ToolCallID, c.ToolName)
		case llm.ChunkFinish:
			fmt.Println("finish", c.Finish)
		}
	}
	resp := asm.Response()
	for _, tc := range resp.Message.ToolCalls {
		// A non-empty tc.ArgumentsError means: answer with an error tool result.
		fmt.Println(tc.Name, tc.Arguments, tc.ArgumentsError == "")
	}
	fmt.Printf("context %d tokens, cache hits %.0f%%\n", resp.Usage.ContextTokens(), 100*resp.Usage.CacheHitRatio())

	// The next request carries the assistant message (reasoning included)
	// and one tool message per call.
	req.Messages = append(req.Messages, resp.Message,
		llm.Message{Role: llm.RoleTool, ToolCallID: "call_1", Name: "read_file", Content: "buy milk"})
	fmt.Println(len(req.Messages), "messages")
	// Output:
	// reasoning "The user wants the notes. "
	// tool call 0: call_1 read_file
	// finish tool_calls
	// read_file {"path":"notes.txt"} true
	// context 1200 tokens, cache hits 85%
	// 4 messages
}

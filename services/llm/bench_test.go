package llm_test

import (
	"testing"

	"github.com/dshgo/harness/services/llm"
)

// BenchmarkAssembler folds a 1000-chunk stream (text, reasoning, two
// interleaved tool calls) into a response.
func BenchmarkAssembler(b *testing.B) {
	var chunks []llm.Chunk
	chunks = append(chunks, llm.Chunk{Kind: llm.ChunkToolCallStart, Index: 0, ToolCallID: "a", ToolName: "read"},
		llm.Chunk{Kind: llm.ChunkToolCallStart, Index: 1, ToolCallID: "b", ToolName: "grep"},
		llm.Chunk{Kind: llm.ChunkToolCallDelta, Index: 0, Text: `{"p":"`}, llm.Chunk{Kind: llm.ChunkToolCallDelta, Index: 1, Text: `{"q":"`})
	for range 330 {
		chunks = append(chunks, llm.Chunk{Kind: llm.ChunkText, Text: "word "}, llm.Chunk{Kind: llm.ChunkReasoning, Text: "thought "},
			llm.Chunk{Kind: llm.ChunkToolCallDelta, Index: 1, Text: "x"})
	}
	u := llm.Usage{PromptTokens: 10}
	chunks = append(chunks, llm.Chunk{Kind: llm.ChunkToolCallDelta, Index: 0, Text: `"}`}, llm.Chunk{Kind: llm.ChunkToolCallDelta, Index: 1, Text: `"}`},
		llm.Chunk{Kind: llm.ChunkUsage, Usage: &u}, llm.Chunk{Kind: llm.ChunkFinish, Finish: llm.FinishToolCalls})
	b.ReportAllocs()
	for b.Loop() {
		var a llm.Assembler
		for _, c := range chunks {
			a.Add(c)
		}
		if r := a.Response(); len(r.Message.ToolCalls) != 2 || r.Message.ToolCalls[1].ArgumentsError != "" {
			b.Fatal("bad fold")
		}
	}
}

// Package llm is the llm service (key "llm"): a registry of model adapters
// by provider route, the provider-neutral conversation types, and the
// ordered streaming contract every adapter follows.
//
// The picture:
//
//	agent ── Service.Stream(ctx, Request{Model: "deepseek/deepseek-v4-flash", ...})
//	           │ resolve route → provider "deepseek", model (aliases applied)
//	           ▼
//	         Adapter.Stream(ctx, req)  (llm-openai, or any plugin's adapter)
//	           │ iter.Seq[Chunk]: text | reasoning | tool-call start/delta/end
//	           ▼                  … usage … finish (exactly one, always last)
//	         Assembler / Collect → Response{Message, Finish, Err, Usage}
//
// Guarantees of a [Stream] (checked by the adapters' tests):
//   - chunks arrive in order; tool calls have stable indices 0, 1, … in
//     first-seen order, their fragments routed by the provider's index;
//   - every started tool call gets a ChunkToolCallEnd, in index order,
//     after all content;
//   - usage, when the provider reported any, is one ChunkUsage carrying the
//     last report (never a sum), right before the finish;
//   - exactly one ChunkFinish ends the stream: stop | tool_calls | length |
//     error | aborted; errors carry an [*Error] with a stable [Code];
//   - cancelling ctx ends the stream with FinishAborted; breaking out of the
//     range loop cancels the request. No goroutine outlives the loop.
//
// [Assembler] folds chunks into an assistant [Message]: missing, `""`,
// whitespace and `null` tool arguments become `{}`; arguments that are not a
// JSON object (truncated JSON) are kept verbatim and flagged in
// ToolCall.ArgumentsError so the agent can answer with an error tool result.
// Responses without usage have UsageReported=false: estimate, never count 0.
//
// Registration is an effect: a plugin that provides an adapter calls
// [Service.Register] inside core.Context.Effect, so the route disappears
// when the plugin unloads; a second adapter for a route fails with
// [ErrDuplicateProvider].
//
// Contracts follow dsh's @deepseek-ai/dsh-llm (paraphrased), the bug cases
// B12, B14 and B23, and issue 9. The scripted OpenAI-compatible server for
// tests is package [github.com/dshgo/harness/services/llm/llmtest].
package llm

// Package llmopenai is the llm-openai plugin: an [llm.Adapter] for any
// OpenAI-compatible chat-completions endpoint (DeepSeek, OpenAI, Ollama,
// vLLM, llama.cpp server), over net/http: the request body and the stream's
// chunks are this package's own types, and a small server-sent-events reader
// (transport.go) reads the reply. openai-go's encoder is kept in the tests
// as the reference the request bytes are compared with.
//
// One plugin row is one provider route. The adapter streams with
// stream_options.include_usage and translates the server-sent events into
// the llm service's ordered chunks:
//
//   - content → ChunkText; reasoning_content (DeepSeek, llama.cpp) or
//     reasoning (Ollama, vLLM) → ChunkReasoning, never joined into text;
//   - tool_calls fragments are routed by their index (first-seen order gives
//     the stable index), by id when the index is missing, and never merge
//     two names; ends are emitted for every call at the end of the stream;
//   - usage may arrive on the finish chunk (DeepSeek), in a usage-only chunk
//     after it (OpenAI, vLLM, Ollama) or on every chunk: the last report is
//     kept, never added; DeepSeek's prompt_cache_hit/miss and OpenAI's
//     prompt_tokens_details.cached_tokens are both understood;
//   - the finish chunk comes last, after tool-call ends and usage; it
//     carries the `model` the chunks named (the last non-empty one), which
//     can differ from the requested model, or none when they named none.
//
// Requests: assistant turns that made tool calls carry their reasoning back
// as reasoning_content (DeepSeek thinking mode answers HTTP 400 otherwise);
// the model's thinking mode goes out as `thinking: {type: enabled|disabled}`
// and `reasoning_effort` when the model config has a thinking switch.
//
// A server that ignores stream=true and answers application/json with one
// chat.completion is translated into the same chunks.
//
// Failures: HTTP 401/403 → AUTH, 402 and 429 insufficient_quota → BILLING
// (final), 429 → RATE_LIMIT, 5xx/408 and in-stream error events → SERVER
// (message and provider code, not the raw event), context-window wording →
// CONTEXT_LENGTH, other 4xx, malformed events and a response past
// maxResponseBytes → PROTOCOL, resets, timeouts and cut streams → NETWORK,
// as is a 200 that ends before any output (only keep-alives), cancellation
// → finish "aborted". The idle timeout restarts on any bytes received, SSE
// keep-alive comments included. RATE_LIMIT, SERVER and NETWORK failures that happen
// before any output are retried (maxRetries, exponential backoff with
// jitter from retryBaseDelay, honouring Retry-After / retry-after-ms up to
// retryMaxDelay). Once output was streamed, a failure ends the stream.
//
// The API key comes from config apiKey or the variable named by apiKeyEnv,
// read once at activation and kept only in memory; a route that needs a key
// and has none fails to activate with a message naming both.
package llmopenai

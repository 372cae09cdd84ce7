// Package tokenmeter counts tokens: of a text, of chat messages and of tool
// schemas, and projects how large the next request of a session will be.
//
// The picture:
//
//	provider usage ──RecordUsage──► anchor {envelope, messages, prompt tokens}
//	                                   │
//	next request = anchor.PromptTokens + Σ estimate(messages appended since)
//	               └ or a full estimate (system + tools + all messages) when the
//	                 envelope (model, system prompt, tools) or the history
//	                 before the anchor changed
//
// An [Estimator] prices text. Five are built in, chosen by name
// ([NewEstimator]): "heuristic" (the default: a one-pass scanner calibrated
// against the DeepSeek-V3 tokenizer, within ±15% per kind of text), "bytes"
// (ceil(bytes/4), deterministic, for tests), "o200k" and "cl100k" (exact
// OpenAI encodings, offline, vocabularies embedded compressed; see
// [Tiktoken]) and
// "tokenizer-json" (exact byte-level BPE from a HuggingFace tokenizer.json,
// such as DeepSeek's or Qwen's; see [BPE]).
//
// Provider usage is the authority; estimates cover only what the provider has
// not priced yet. DeepSeek's prompt_tokens already includes
// prompt_cache_hit_tokens, and completion_tokens already includes reasoning
// tokens: neither is added again (bug case B23).
//
// Contract: dsh token-meter (reference part C): per-message and per-block
// overheads of 4 tokens (C1), the usage anchor with the latest-anchor-wins and
// envelope-equality rules (C4), cumulative usage and context pressure (C5).
// Simplified as C7 suggests: no event-log fold, no shadow pricing; the caller
// hands the meter the messages of each request ([Session.Project] before,
// [Session.Record] after). The "usage ≥ heuristic anchor" guard is kept: a
// prompt_tokens below the estimator's price of its own request anchors the
// estimate instead (the projection's Source is then "estimated"). One
// deliberate difference: dsh prices a rewritten history as a signed delta
// from the anchor; here an anchor applies only while its messages are an
// unchanged prefix, and a rewrite (compaction) is priced in full, system
// prompt and tool schemas included. Deltas are therefore never negative, and
// a post-compaction estimate does not inherit the error of the estimate of
// what was removed (bug case B23, mark3labs/kit #80).
package tokenmeter

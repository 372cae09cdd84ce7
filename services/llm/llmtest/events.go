package llmtest

import "encoding/json"

// chunk marshals one chat.completion.chunk with a single choice.
func chunk(delta map[string]any, finish any, usage any) string {
	choice := map[string]any{"index": 0, "delta": delta}
	if finish != nil {
		choice["finish_reason"] = finish
	}
	c := map[string]any{
		"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": 1700000000,
		"model": "llmtest", "choices": []any{choice},
	}
	if usage != nil {
		c["usage"] = usage
	}
	b, err := json.Marshal(c)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Raw returns payload unchanged: any JSON (or non-JSON) event text.
func Raw(payload string) string { return payload }

// TextDelta is a content delta.
func TextDelta(text string) string {
	return chunk(map[string]any{"content": text}, nil, nil)
}

// ReasoningDelta is a DeepSeek / llama.cpp `reasoning_content` delta.
func ReasoningDelta(text string) string {
	return chunk(map[string]any{"reasoning_content": text}, nil, nil)
}

// ReasoningFieldDelta is an Ollama / vLLM `reasoning` delta.
func ReasoningFieldDelta(text string) string {
	return chunk(map[string]any{"reasoning": text}, nil, nil)
}

// ToolCallStart opens tool call index with its id and name and a first
// arguments fragment (often "").
func ToolCallStart(index int, id, name, args string) string {
	return chunk(map[string]any{"tool_calls": []any{map[string]any{
		"index": index, "id": id, "type": "function",
		"function": map[string]any{"name": name, "arguments": args},
	}}}, nil, nil)
}

// ToolCallArgs is an arguments fragment for tool call index.
func ToolCallArgs(index int, args string) string {
	return chunk(map[string]any{"tool_calls": []any{map[string]any{
		"index": index, "function": map[string]any{"arguments": args},
	}}}, nil, nil)
}

// Finish is the chunk carrying finish_reason ("stop", "tool_calls", "length").
func Finish(reason string) string {
	return chunk(map[string]any{}, reason, nil)
}

// FinishWithUsage is a finish chunk that also carries usage (DeepSeek style).
func FinishWithUsage(reason string, usage Usage) string {
	return chunk(map[string]any{}, reason, usage)
}

// UsageOnly is a usage-only chunk with an empty choices list, sent after the
// finish chunk (OpenAI, vLLM, Ollama with stream_options.include_usage).
func UsageOnly(usage Usage) string {
	b, err := json.Marshal(map[string]any{
		"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": 1700000000,
		"model": "llmtest", "choices": []any{}, "usage": usage,
	})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Usage is a wire usage object. Zero fields are omitted, so the same type
// writes DeepSeek's and OpenAI's shapes.
type Usage struct {
	PromptTokens          int64         `json:"prompt_tokens"`
	CompletionTokens      int64         `json:"completion_tokens"`
	TotalTokens           int64         `json:"total_tokens"`
	PromptCacheHitTokens  int64         `json:"prompt_cache_hit_tokens,omitempty"`
	PromptCacheMissTokens int64         `json:"prompt_cache_miss_tokens,omitempty"`
	PromptTokensDetails   *TokenDetails `json:"prompt_tokens_details,omitempty"`
	CompletionDetails     *TokenDetails `json:"completion_tokens_details,omitempty"`
}

// TokenDetails is prompt_tokens_details / completion_tokens_details.
type TokenDetails struct {
	CachedTokens    int64 `json:"cached_tokens,omitempty"`
	ReasoningTokens int64 `json:"reasoning_tokens,omitempty"`
}

package llmtest

import (
	"encoding/json"
	"unicode/utf8"
)

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

// Raw returns payload unchanged: any JSON (or non-JSON) event text, sent
// as one `data:` event.
func Raw(payload string) string { return payload }

// rawPrefix marks an event written without SSE framing. It starts with a
// NUL byte, which no JSON payload can.
const rawPrefix = "\x00llmtest-raw\x00"

// Bytes returns an event that writes b to the response body exactly as
// given, without the `data: ...\n\n` framing: SSE comments, several events
// at once, a line split across writes, or garbage.
func Bytes(b string) string { return rawPrefix + b }

// KeepAlive is the SSE comment DeepSeek sends every few seconds while a
// request waits in its queue (`: keep-alive` and a blank line). Clients
// must ignore it.
func KeepAlive() string { return Bytes(": keep-alive\n\n") }

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

// Reply is a turn that streams text in fragments of at most 16 bytes and
// finishes with "stop".
func Reply(text string) Turn {
	var ev []string
	for _, part := range fragments(text, 16) {
		ev = append(ev, TextDelta(part))
	}
	return Stream(append(ev, Finish("stop"))...)
}

// Call is one tool call of a [Calls] turn. Args is the complete raw
// arguments text (it may be "" or deliberately invalid).
type Call struct {
	ID, Name, Args string
}

// Calls is a turn that opens every call, then streams their arguments in
// fragments of at most 8 bytes, interleaved across calls (call 0's first
// fragment, call 1's first, ...), and finishes with "tool_calls".
func Calls(calls ...Call) Turn {
	var ev []string
	parts := make([][]string, len(calls))
	for i, c := range calls {
		ev = append(ev, ToolCallStart(i, c.ID, c.Name, ""))
		parts[i] = fragments(c.Args, 8)
	}
	for more := true; more; {
		more = false
		for i := range parts {
			if len(parts[i]) > 0 {
				ev = append(ev, ToolCallArgs(i, parts[i][0]))
				parts[i] = parts[i][1:]
				more = true
			}
		}
	}
	return Stream(append(ev, Finish("tool_calls"))...)
}

// WithReasoning returns t with reasoning_content deltas (fragments of at
// most 16 bytes) streamed before its other events.
func (t Turn) WithReasoning(text string) Turn {
	var ev []string
	for _, part := range fragments(text, 16) {
		ev = append(ev, ReasoningDelta(part))
	}
	t.Events = append(ev, t.Events...)
	return t
}

// WithUsage returns t with a usage-only chunk after its other events.
func (t Turn) WithUsage(u Usage) Turn {
	t.Events = append(append([]string(nil), t.Events...), UsageOnly(u))
	return t
}

// WithModel returns t with the "model" field of every JSON chunk set to
// name; "" removes it (a server that names no model). The builders'
// chunks say "llmtest", whatever model the request asked for. Events that
// are not JSON objects ([Bytes], [KeepAlive], invalid [Raw]) and
// [Turn.Generate]'s are left as they are.
func (t Turn) WithModel(name string) Turn { return t.withField("model", name) }

// WithID returns t with the "id" field (the response's id) of every JSON
// chunk set to id; "" removes it (a server that sends none). The
// builders' chunks say "chatcmpl-llmtest". Events that are not JSON
// objects are left as they are, as with [Turn.WithModel].
func (t Turn) WithID(id string) Turn { return t.withField("id", id) }

// withField sets key to value in every JSON-object event ("" removes it).
func (t Turn) withField(key, value string) Turn {
	out := make([]string, len(t.Events))
	for i, e := range t.Events {
		out[i] = e
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(e), &obj) != nil || obj == nil {
			continue
		}
		if value == "" {
			delete(obj, key)
		} else {
			obj[key], _ = json.Marshal(value)
		}
		if b, err := json.Marshal(obj); err == nil {
			out[i] = string(b)
		}
	}
	t.Events = out
	return t
}

// fragments splits s into pieces of at most n bytes without splitting a
// UTF-8 sequence; "" gives no pieces.
func fragments(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		cut := min(n, len(s))
		for cut < len(s) && cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			cut = len(s)
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}

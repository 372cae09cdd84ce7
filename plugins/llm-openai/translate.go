package llmopenai

import (
	"fmt"
	"strings"

	"github.com/dshgo/harness/services/llm"
)

// wireChunk is the part of a chat.completion.chunk the adapter reads.
// Pointers distinguish absent and null from empty.
type wireChunk struct {
	Choices []wireChoice `json:"choices"`
	Usage   *wireUsage   `json:"usage"`
	// Model is the model that answered, as the provider names it.
	Model string `json:"model"`
	// ID is the provider's id of the response ("chatcmpl-…").
	ID string `json:"id"`
}

type wireChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`
	FinishReason *string   `json:"finish_reason"`
}

// wireDelta is a streamed delta; a non-streamed message has the same shape.
type wireDelta struct {
	Content          *string             `json:"content"`
	ReasoningContent *string             `json:"reasoning_content"`
	Reasoning        *string             `json:"reasoning"`
	ToolCalls        []wireToolCallDelta `json:"tool_calls"`
}

type wireToolCallDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string  `json:"name"`
		Arguments *string `json:"arguments"`
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens         int64  `json:"prompt_tokens"`
	CompletionTokens     int64  `json:"completion_tokens"`
	TotalTokens          int64  `json:"total_tokens"`
	PromptCacheHitTokens *int64 `json:"prompt_cache_hit_tokens"`
	PromptTokensDetails  *struct {
		CachedTokens *int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// usage normalises DeepSeek's and OpenAI's cache accounting the way the
// token meter does: hits from prompt_tokens_details.cached_tokens (which
// wins when both are present) or prompt_cache_hit_tokens, clamped to
// [0, prompt_tokens]; misses = prompt_tokens - hits.
func (w wireUsage) usage() llm.Usage {
	u := llm.Usage{PromptTokens: max(w.PromptTokens, 0), CompletionTokens: max(w.CompletionTokens, 0), TotalTokens: w.TotalTokens}
	var hit int64
	switch {
	case w.PromptTokensDetails != nil && w.PromptTokensDetails.CachedTokens != nil:
		hit = *w.PromptTokensDetails.CachedTokens
	case w.PromptCacheHitTokens != nil:
		hit = *w.PromptCacheHitTokens
	}
	u.CacheHitTokens = min(max(hit, 0), u.PromptTokens)
	u.CacheMissTokens = u.PromptTokens - u.CacheHitTokens
	if w.CompletionTokensDetails != nil {
		u.ReasoningTokens = w.CompletionTokensDetails.ReasoningTokens
	}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	return u
}

// openCall is a tool call being streamed.
type openCall struct {
	id, name string
	started  bool
	pending  strings.Builder // argument fragments received before the name
}

// translator turns wire chunks of one attempt into ordered llm chunks.
//
// Tool-call fragments are routed by the provider's index; fragments without
// an index go to the call with the same id, else to a new call when they
// carry a different name, else to the most recent call. Names are never
// concatenated. A call is started (ChunkToolCallStart) once its name is
// known; argument fragments that arrive earlier are held back until then.
type translator struct {
	emit    func(llm.Chunk) bool
	emitted bool // any content chunk went out (retries are no longer safe)
	stopped bool // the consumer stopped

	byIndex map[int]int
	byID    map[string]int
	calls   []*openCall
	last    int

	finish string
	usage  *llm.Usage
	model  string // the last non-empty `model` of the chunks
	id     string // the last non-empty `id` of the chunks
}

func newTranslator(emit func(llm.Chunk) bool) *translator {
	return &translator{emit: emit, byIndex: map[int]int{}, byID: map[string]int{}, last: -1}
}

func (t *translator) send(c llm.Chunk) {
	if t.stopped {
		return
	}
	t.emitted = true
	if !t.emit(c) {
		t.stopped = true
	}
}

// add folds one wire chunk. Only choice 0 is read (requests ask for n=1).
func (t *translator) add(c *wireChunk) {
	if c.Usage != nil {
		u := c.Usage.usage()
		t.usage = &u // keep the last report, never add
	}
	if c.Model != "" {
		t.model = c.Model
	}
	if c.ID != "" {
		t.id = c.ID
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue
		}
		d := &ch.Delta
		switch {
		case d.ReasoningContent != nil && *d.ReasoningContent != "":
			t.send(llm.Chunk{Kind: llm.ChunkReasoning, Text: *d.ReasoningContent})
		case d.Reasoning != nil && *d.Reasoning != "":
			t.send(llm.Chunk{Kind: llm.ChunkReasoning, Text: *d.Reasoning})
		}
		if d.Content != nil && *d.Content != "" {
			t.send(llm.Chunk{Kind: llm.ChunkText, Text: *d.Content})
		}
		for j := range d.ToolCalls {
			t.toolCall(&d.ToolCalls[j])
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			t.finish = *ch.FinishReason
		}
	}
}

func (t *translator) toolCall(d *wireToolCallDelta) {
	idx := t.route(d)
	oc := t.calls[idx]
	if oc.id == "" && d.ID != "" {
		oc.id = d.ID
		t.byID[d.ID] = idx
	}
	if oc.name == "" && d.Function.Name != "" {
		oc.name = d.Function.Name
	}
	if !oc.started && oc.name != "" {
		t.start(idx)
	}
	if d.Function.Arguments != nil && *d.Function.Arguments != "" {
		if oc.started {
			t.send(llm.Chunk{Kind: llm.ChunkToolCallDelta, Index: idx, Text: *d.Function.Arguments})
		} else {
			oc.pending.WriteString(*d.Function.Arguments)
		}
	}
	t.last = idx
}

// route finds or opens the call a fragment belongs to.
func (t *translator) route(d *wireToolCallDelta) int {
	if d.Index != nil {
		if idx, ok := t.byIndex[*d.Index]; ok {
			return idx
		}
		idx := t.open()
		t.byIndex[*d.Index] = idx
		return idx
	}
	if d.ID != "" {
		if idx, ok := t.byID[d.ID]; ok {
			return idx
		}
		return t.open()
	}
	if t.last < 0 {
		return t.open()
	}
	if cur := t.calls[t.last]; d.Function.Name != "" && cur.name != "" && d.Function.Name != cur.name {
		return t.open()
	}
	return t.last
}

func (t *translator) open() int {
	t.calls = append(t.calls, &openCall{})
	return len(t.calls) - 1
}

func (t *translator) start(idx int) {
	oc := t.calls[idx]
	oc.started = true
	if oc.id == "" {
		oc.id = fmt.Sprintf("call_%d", idx)
	}
	t.send(llm.Chunk{Kind: llm.ChunkToolCallStart, Index: idx, ToolCallID: oc.id, ToolName: oc.name})
	if oc.pending.Len() > 0 {
		t.send(llm.Chunk{Kind: llm.ChunkToolCallDelta, Index: idx, Text: oc.pending.String()})
		oc.pending.Reset()
	}
}

// end emits the tail of a stream: tool-call ends, usage, then finish. err,
// when set, replaces the provider's finish reason.
func (t *translator) end(err *llm.Error) {
	if err == nil {
		if t.finish == "" {
			err = llm.Errorf(llm.CodeProtocol, "the stream ended without a finish_reason")
		}
	}
	if err == nil {
		for idx, oc := range t.calls {
			if !oc.started {
				t.start(idx)
			}
			t.send(llm.Chunk{Kind: llm.ChunkToolCallEnd, Index: idx})
		}
	}
	if t.usage != nil {
		t.send(llm.Chunk{Kind: llm.ChunkUsage, Usage: t.usage})
	}
	if err != nil {
		reason := llm.FinishError
		if err.Code == llm.CodeAborted {
			reason = llm.FinishAborted
		}
		t.send(llm.Chunk{Kind: llm.ChunkFinish, Finish: reason, Err: err, Model: t.model, ResponseID: t.id})
		return
	}
	reason, ferr := t.finishReason()
	t.send(llm.Chunk{Kind: llm.ChunkFinish, Finish: reason, Err: ferr, Model: t.model, ResponseID: t.id})
}

func (t *translator) finishReason() (llm.FinishReason, *llm.Error) {
	switch t.finish {
	case "tool_calls", "function_call":
		return llm.FinishToolCalls, nil
	case "length":
		return llm.FinishLength, nil
	case "content_filter", "insufficient_system_resource":
		return llm.FinishError, &llm.Error{Code: llm.CodeServer, Message: "the provider stopped the reply: " + t.finish}
	}
	// Some servers (Ollama among them) report "stop" for a turn with tool calls.
	if len(t.calls) > 0 {
		return llm.FinishToolCalls, nil
	}
	return llm.FinishStop, nil
}

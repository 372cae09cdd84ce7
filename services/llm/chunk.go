package llm

import (
	"context"
	"iter"
)

// ChunkKind tells which fields of a [Chunk] are set.
type ChunkKind uint8

// Chunk kinds, in the order a stream may produce them (text, reasoning and
// tool-call chunks interleave freely; usage, when reported, comes after every
// content chunk; finish is always last).
const (
	// ChunkText: Text is a delta of visible assistant text.
	ChunkText ChunkKind = iota + 1
	// ChunkReasoning: Text is a delta of reasoning (thinking) text.
	ChunkReasoning
	// ChunkToolCallStart: a new tool call at Index with ToolCallID and ToolName.
	ChunkToolCallStart
	// ChunkToolCallDelta: Text is a raw fragment of the arguments of call Index.
	ChunkToolCallDelta
	// ChunkToolCallEnd: call Index is complete; emitted for every started call,
	// in index order, before usage and finish.
	ChunkToolCallEnd
	// ChunkUsage: Usage holds the provider's token counts (the last report wins).
	ChunkUsage
	// ChunkFinish: exactly one per stream, always the last; Finish says why,
	// Err is set for FinishError and FinishAborted.
	ChunkFinish
)

// String names the kind ("text", "reasoning", ...).
func (k ChunkKind) String() string {
	switch k {
	case ChunkText:
		return "text"
	case ChunkReasoning:
		return "reasoning"
	case ChunkToolCallStart:
		return "tool-call-start"
	case ChunkToolCallDelta:
		return "tool-call-delta"
	case ChunkToolCallEnd:
		return "tool-call-end"
	case ChunkUsage:
		return "usage"
	case ChunkFinish:
		return "finish"
	}
	return "unknown"
}

// FinishReason says why a response stopped.
type FinishReason string

// Finish reasons.
const (
	// FinishStop: the model ended its turn.
	FinishStop FinishReason = "stop"
	// FinishToolCalls: the model wants its tool calls run.
	FinishToolCalls FinishReason = "tool_calls"
	// FinishLength: the output token limit cut the reply.
	FinishLength FinishReason = "length"
	// FinishError: a transport, provider or protocol failure; see Chunk.Err.
	FinishError FinishReason = "error"
	// FinishAborted: the caller's context was cancelled; see Chunk.Err.
	FinishAborted FinishReason = "aborted"
)

// Chunk is one ordered event of a model stream. Kind says which fields are set.
type Chunk struct {
	Kind ChunkKind
	// Text: the delta for ChunkText, ChunkReasoning and ChunkToolCallDelta.
	Text string
	// Index: the tool call's stable index (0, 1, ... in first-seen order) for
	// the three tool-call kinds. Provider indices are remapped; fragments are
	// routed by provider index, never appended to "the last call".
	Index int
	// ToolCallID and ToolName are set on ChunkToolCallStart.
	ToolCallID string
	ToolName   string
	// Usage is set on ChunkUsage.
	Usage *Usage
	// Finish is set on ChunkFinish.
	Finish FinishReason
	// Err is set on ChunkFinish when Finish is FinishError or FinishAborted.
	Err *Error
	// Model may be set on ChunkFinish: the model name the provider said
	// answered (an OpenAI-compatible response's `model`), which can differ
	// from the request's (a dated snapshot, a router's pick). Empty when
	// the provider named none; adapters never fill it in from the request.
	Model string
	// ResponseID may be set on ChunkFinish: the provider's id of the
	// response (an OpenAI-compatible response's `id`, e.g. "chatcmpl-…"),
	// for matching a step with the provider's logs. Empty when the
	// provider sent none.
	ResponseID string
}

// Stream is what adapters return: an ordered sequence of chunks that always
// ends with exactly one ChunkFinish (unless the consumer stops early, which
// cancels the underlying request). Ranging over it performs the request; it
// runs on the caller's goroutine and starts none that outlive it.
type Stream = iter.Seq[Chunk]

// Adapter is a model provider implementation, registered under a provider
// route name with [Service.Register].
type Adapter interface {
	// Provider is the route name, e.g. "deepseek".
	Provider() string
	// Models lists the route's models; exactly one should be Default.
	Models() []Model
	// Stream performs req. req.Model is a canonical model name from Models()
	// (aliases already resolved). Stream must honour ctx and end with exactly
	// one finish chunk.
	Stream(ctx context.Context, req Request) Stream
}

// ModelResolver is implemented by adapters that accept models beyond their
// Models() list (e.g. a local server serving whatever it has pulled). The
// service asks it instead of matching Models() itself.
type ModelResolver interface {
	// ResolveModel finds name (canonical, alias, or "" for the default),
	// with the alias's thinking mode applied, like [ResolveModel].
	ResolveModel(name string) (Model, bool)
}

// FinishWith returns a one-chunk stream that finishes with err (code and
// message as given). Adapters and the service use it for failures detected
// before any request is made.
func FinishWith(err *Error) Stream {
	return func(yield func(Chunk) bool) {
		reason := FinishError
		if err.Code == CodeAborted {
			reason = FinishAborted
		}
		yield(Chunk{Kind: ChunkFinish, Finish: reason, Err: err})
	}
}

package llm

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Response is a stream folded into one assistant message.
type Response struct {
	// Message is the assistant message (Role assistant) with Content,
	// Reasoning and ToolCalls in stable-index order, arguments normalised.
	Message Message
	// Finish is the finish reason; FinishError or FinishAborted come with Err.
	Finish FinishReason
	// Err is the failure, for FinishError and FinishAborted.
	Err *Error
	// Usage is the last usage report; meaningful only when UsageReported.
	Usage Usage
	// UsageReported is false when the stream carried no usage: the caller
	// must estimate, never count the request as zero tokens (bug case B23).
	UsageReported bool
	// Model is the model name the provider reported answering with (the
	// finish chunk's Model), or "" when it reported none.
	Model string
	// ID is the provider's id of the response (the finish chunk's
	// ResponseID), or "" when it sent none.
	ID string
}

// Assembler folds chunks into a [Response] while the caller also forwards
// them elsewhere (a UI, a log). The zero value is ready to use. Not safe for
// concurrent use.
//
// Chunks after the finish are ignored. If the stream ended without a finish
// (the consumer stopped early), Response reports FinishAborted.
//
// MaxArgumentBytes bounds what is kept of one tool call's arguments: once a
// call's fragments exceed it, they are counted but no longer stored, and
// Response gives that call Arguments `{}` and an ArgumentsError saying how
// large the arguments were (see [ArgumentsTooLarge]), so an endpoint that
// streams a huge argument cannot make the caller hold it. 0 keeps every
// byte; set it before the first Add.
//
// MaxTextBytes bounds, the same way, what is kept of the reply's text and
// of its reasoning (each): past it, the rest is counted, not stored, and
// Response ends the kept text with a note saying how much was dropped (see
// [TextCut]). The chunks themselves still reach whoever forwards them. 0
// keeps every byte.
//
// A tool-call id longer than [MaxToolCallIDBytes] is replaced by an id
// derived from it ([CapToolCallID]); the call's IDBytes records the
// original length.
type Assembler struct {
	// MaxArgumentBytes is the largest tool-call argument text kept, in bytes
	// (0: no limit).
	MaxArgumentBytes int64
	// MaxTextBytes is the largest text, and the largest reasoning, kept of
	// the reply, in bytes (0: no limit).
	MaxTextBytes int64

	text, reasoning strings.Builder
	textSize        int64 // bytes of text received, kept or not
	reasoningSize   int64
	calls           []ToolCall
	args            []*strings.Builder // pointers: a grown slice must not copy a used Builder
	sizes           []int64            // bytes received per call, kept or not
	usage           *Usage
	finish          FinishReason
	err             *Error
	model, id       string
}

// Add folds one chunk.
func (a *Assembler) Add(c Chunk) {
	if a.finish != "" {
		return
	}
	switch c.Kind {
	case ChunkText:
		a.textSize = keep(&a.text, a.textSize, c.Text, a.MaxTextBytes)
	case ChunkReasoning:
		a.reasoningSize = keep(&a.reasoning, a.reasoningSize, c.Text, a.MaxTextBytes)
	case ChunkToolCallStart:
		for len(a.calls) <= c.Index {
			a.calls = append(a.calls, ToolCall{})
			a.args = append(a.args, &strings.Builder{})
			a.sizes = append(a.sizes, 0)
		}
		a.calls[c.Index].ID, a.calls[c.Index].IDBytes = CapToolCallID(c.ToolCallID)
		a.calls[c.Index].Name = c.ToolName
	case ChunkToolCallDelta:
		if c.Index >= 0 && c.Index < len(a.args) {
			a.sizes[c.Index] += int64(len(c.Text))
			if a.MaxArgumentBytes > 0 && a.sizes[c.Index] > a.MaxArgumentBytes {
				if a.args[c.Index].Len() > 0 {
					*a.args[c.Index] = strings.Builder{} // drop what was kept
				}
				break
			}
			a.args[c.Index].WriteString(c.Text)
		}
	case ChunkUsage:
		if c.Usage != nil {
			u := *c.Usage
			a.usage = &u
		}
	case ChunkFinish:
		a.finish, a.err, a.model, a.id = c.Finish, c.Err, c.Model, c.ResponseID
	}
}

// Response returns the folded result. It may be called more than once.
func (a *Assembler) Response() Response {
	r := Response{
		Message: Message{Role: RoleAssistant, Content: cutText(a.text.String(), a.textSize, a.MaxTextBytes, "text"),
			Reasoning: cutText(a.reasoning.String(), a.reasoningSize, a.MaxTextBytes, "reasoning")},
		Finish: a.finish,
		Err:    a.err,
		Model:  a.model,
		ID:     a.id,
	}
	if r.Finish == "" {
		r.Finish = FinishAborted
		r.Err = Errorf(CodeAborted, "stream ended without a finish")
	}
	for i, c := range a.calls {
		if a.MaxArgumentBytes > 0 && a.sizes[i] > a.MaxArgumentBytes {
			c.Arguments, c.ArgumentsError = "{}", ArgumentsTooLarge(a.sizes[i], a.MaxArgumentBytes)
		} else {
			c.Arguments, c.ArgumentsError = NormalizeArguments(a.args[i].String())
		}
		r.Message.ToolCalls = append(r.Message.ToolCalls, c)
	}
	if a.usage != nil {
		r.Usage, r.UsageReported = *a.usage, true
	}
	return r
}

// Collect ranges over s and folds it. Use it when nothing needs the chunks
// as they arrive.
func Collect(s Stream) Response {
	var a Assembler
	for c := range s {
		a.Add(c)
	}
	return a.Response()
}

// keep appends delta to b while the total received (size, returned with
// delta added) stays within limit (0: no limit), cutting at a UTF-8
// boundary.
func keep(b *strings.Builder, size int64, delta string, limit int64) int64 {
	if limit <= 0 {
		b.WriteString(delta)
		return size + int64(len(delta))
	}
	n := int64(len(delta))
	if room := limit - int64(b.Len()); room > 0 && size == int64(b.Len()) {
		if int64(len(delta)) > room {
			cut := int(room)
			for cut > 0 && !utf8.RuneStart(delta[cut]) {
				cut--
			}
			delta = delta[:cut]
		}
		b.WriteString(delta)
	}
	return size + n
}

// cutText is kept text with the note of [TextCut] when size bytes were
// received and more than limit.
func cutText(kept string, size, limit int64, what string) string {
	if limit <= 0 || size <= int64(len(kept)) {
		return kept
	}
	return kept + TextCut(what, size, limit)
}

// TextCut is the note that ends a reply's text (what: "text" or
// "reasoning") of which only limit of size bytes were kept.
func TextCut(what string, size, limit int64) string {
	return fmt.Sprintf("\n[the reply's %s went past %d bytes; the remaining %d bytes were not kept]", what, limit, size-limit)
}

// MaxToolCallIDBytes is the longest provider tool-call id kept as it is;
// an [Assembler] replaces a longer one ([CapToolCallID]).
const MaxToolCallIDBytes = 256

// CapToolCallID returns id, or, when it is longer than
// [MaxToolCallIDBytes], a short id derived from it (`call_` and 32 hex
// digits of its SHA-256, so the same long id always maps to the same
// replacement) and the original length; 0 when id is kept.
func CapToolCallID(id string) (string, int) {
	if len(id) <= MaxToolCallIDBytes {
		return id, 0
	}
	sum := sha256.Sum256([]byte(id))
	return "call_" + hex.EncodeToString(sum[:16]), len(id)
}

// ArgumentsTooLarge is the ArgumentsError of a tool call whose arguments
// (size bytes) exceeded the limit (bytes) of an [Assembler]: the text the
// agent reports back to the model.
func ArgumentsTooLarge(size, limit int64) string {
	return fmt.Sprintf("the arguments are %d bytes, over the limit of %d bytes, and were discarded; "+
		"send smaller arguments (for a large file, write it in several smaller calls)", size, limit)
}

// NormalizeArguments turns a model's raw argument text into the text to keep
// in history. Empty, whitespace-only and `null` become `{}`. A JSON object is
// returned unchanged. Anything else is returned unchanged with a reason:
// "truncated JSON: ...", "invalid JSON: ..." or "arguments must be a JSON
// object, got array". The reason is what the agent reports back to the model
// as an error tool result.
func NormalizeArguments(raw string) (args string, reason string) {
	trimmed := strings.TrimSpace(raw)
	if trimmed == "" || trimmed == "null" {
		return "{}", ""
	}
	dec := json.NewDecoder(strings.NewReader(trimmed))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return raw, "truncated JSON: the arguments end before the object is complete"
		}
		return raw, "invalid JSON: " + err.Error()
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return raw, "invalid JSON: unexpected data after the arguments object"
	}
	if _, ok := v.(map[string]any); !ok {
		return raw, "arguments must be a JSON object, got " + jsonKind(v)
	}
	return raw, ""
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	}
	return "null"
}

package tokenmeter

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"strconv"
)

// Role is the author of a [Message].
type Role string

// The roles the meter prices. The price does not depend on the role.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one chat message as the meter prices it. It is deliberately
// provider-neutral; the agent converts its own history into this shape.
//
//   - Content is the message text (user, system, assistant, or the text of a
//     tool result).
//   - Reasoning is assistant reasoning text that is sent back to the model;
//     leave it empty when the provider drops it (DeepSeek does).
//   - ToolCalls are the assistant's tool calls (name and JSON argument text).
//   - ToolCallID marks a RoleTool message as the result of that call; its
//     Content is the result text.
type Message struct {
	Role       Role       `json:"role"`
	Content    string     `json:"content,omitempty"`
	Reasoning  string     `json:"reasoning,omitempty"`
	ToolCalls  []ToolCall `json:"toolCalls,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty"`
}

// ToolCall is one tool call of an assistant message.
type ToolCall struct {
	ID        string `json:"id,omitempty"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // the JSON argument text
}

// ToolSchema is one tool as advertised to the model.
type ToolSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// Overheads of the dsh token meter (reference C1), in tokens: every content
// block (text, reasoning, tool call, tool result) costs BlockOverhead on top
// of its text, every message RoleOverhead on top of its blocks, and a
// non-empty system prompt or tool list BlockOverhead on top of its text.
const (
	BlockOverhead = 4
	RoleOverhead  = 4
)

// PriceMessage returns the tokens of msg under e: RoleOverhead, plus per
// non-empty Content or Reasoning e.Count(text)+BlockOverhead, plus per tool
// call e.Count(name)+e.Count(arguments)+BlockOverhead; a RoleTool message's
// content is wrapped in one more block (the tool result). With the bytes
// estimator a user message "abcd" costs 1+4+4 = 9.
func PriceMessage(e Estimator, msg Message) int {
	n := RoleOverhead
	if msg.Content != "" {
		n += e.Count(msg.Content) + BlockOverhead
	}
	if msg.Role == RoleTool {
		n += BlockOverhead
	}
	if msg.Reasoning != "" {
		n += e.Count(msg.Reasoning) + BlockOverhead
	}
	for _, c := range msg.ToolCalls {
		n += e.Count(c.Name) + e.Count(c.Arguments) + BlockOverhead
	}
	return n
}

// PriceSystem returns e.Count(system)+BlockOverhead, or 0 for "".
func PriceSystem(e Estimator, system string) int {
	if system == "" {
		return 0
	}
	return e.Count(system) + BlockOverhead
}

// PriceTools returns the tokens of the tool list as sent: the count of its
// JSON encoding plus BlockOverhead, or 0 for no tools.
func PriceTools(e Estimator, tools []ToolSchema) int {
	if len(tools) == 0 {
		return 0
	}
	b, err := marshalPlain(tools)
	if err != nil { // only invalid RawMessage parameters; price them as text
		n := 0
		for _, t := range tools {
			n += e.Count(t.Name) + e.Count(t.Description) + e.Count(string(t.Parameters))
		}
		return n + BlockOverhead
	}
	return e.Count(string(b)) + BlockOverhead
}

var hashSeed = maphash.MakeSeed()

// hashMessage identifies a message's priced content (role included), so a
// session reprices only messages it has not seen at that position.
func hashMessage(msg Message) uint64 {
	var h maphash.Hash
	h.SetSeed(hashSeed)
	field := func(s string) {
		h.WriteString(strconv.Itoa(len(s)))
		h.WriteByte(':')
		h.WriteString(s)
	}
	field(string(msg.Role))
	field(msg.Content)
	field(msg.Reasoning)
	field(msg.ToolCallID)
	for _, c := range msg.ToolCalls {
		field(c.ID)
		field(c.Name)
		field(c.Arguments)
	}
	return h.Sum64()
}

// hashEnvelope identifies what must stay equal for a usage anchor to apply:
// the model, the system prompt and the tool schemas in order.
func hashEnvelope(model, system string, tools []ToolSchema) uint64 {
	var h maphash.Hash
	h.SetSeed(hashSeed)
	for _, s := range []string{model, system} {
		h.WriteString(strconv.Itoa(len(s)))
		h.WriteByte(':')
		h.WriteString(s)
	}
	for _, t := range tools {
		for _, s := range []string{t.Name, t.Description, string(t.Parameters)} {
			h.WriteString(strconv.Itoa(len(s)))
			h.WriteByte(':')
			h.WriteString(s)
		}
	}
	return h.Sum64()
}

// marshalPlain encodes v as JSON without HTML escaping ("<" stays "<", as
// in JSON.stringify and on the wire), so escapes do not inflate prices.
func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

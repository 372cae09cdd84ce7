package llm

import (
	"encoding/json"
	"fmt"
)

// Role is the author of a [Message].
type Role string

// The four roles of a chat conversation.
const (
	// RoleSystem carries the rendered system prompt; it is normally the first message.
	RoleSystem Role = "system"
	// RoleUser carries what the user typed (or a host-injected user turn).
	RoleUser Role = "user"
	// RoleAssistant carries the model's reply: text, reasoning and tool calls.
	RoleAssistant Role = "assistant"
	// RoleTool carries the result of one tool call, correlated by ToolCallID.
	RoleTool Role = "tool"
)

// Message is one provider-neutral conversation entry. Adapters alone translate
// it to and from their wire format.
//
// Field use by role:
//   - system, user: Content.
//   - assistant: Content (visible text, may be empty), Reasoning (thinking text,
//     never joined into Content), ToolCalls (in model order).
//   - tool: Content (the rendered result the model sees), ToolCallID, and
//     optionally Name (the tool's name) for providers that want it.
//
// Adapters must send Reasoning back on assistant messages that made tool calls
// (DeepSeek thinking mode rejects the next request otherwise; bug case B14).
type Message struct {
	Role       Role       `json:"role"`
	Content    string     `json:"content,omitempty"`
	Reasoning  string     `json:"reasoning,omitempty"`
	ToolCalls  []ToolCall `json:"toolCalls,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty"`
	Name       string     `json:"name,omitempty"`
}

// ToolCall is one tool invocation requested by the model.
//
// Arguments is the raw JSON text the model produced, normalised by
// [NormalizeArguments]: missing, `""`, whitespace-only and `null` arguments
// become `{}`. When the text is not a JSON object (for example truncated JSON)
// Arguments keeps the raw text, so history stays faithful, and ArgumentsError
// says why; the agent must then answer the call with an error tool result
// instead of executing it (bug case B12, variant 3).
type ToolCall struct {
	// ID is the provider-issued call id; tool results refer to it.
	ID string `json:"id"`
	// Name is the tool name as the model spelled it.
	Name string `json:"name"`
	// Arguments is the JSON object text (see the type doc).
	Arguments string `json:"arguments"`
	// ArgumentsError is empty when Arguments is a JSON object; otherwise a
	// human-readable reason ("truncated JSON: unexpected end of input").
	ArgumentsError string `json:"argumentsError,omitempty"`
	// IDBytes is the length of the provider's id when it was longer than
	// [MaxToolCallIDBytes] and ID is its replacement ([CapToolCallID]); 0
	// when ID is the provider's.
	IDBytes int `json:"idBytes,omitempty"`
}

// ToolSchema is the model-facing description of one tool.
type ToolSchema struct {
	// Name is the tool name the model calls.
	Name string `json:"name"`
	// Description is the model-facing prose.
	Description string `json:"description,omitempty"`
	// Parameters is a JSON Schema object for the arguments; nil means
	// `{"type":"object","properties":{}}`.
	Parameters json.RawMessage `json:"parameters,omitempty"`
}

// Thinking selects a model's thinking (reasoning) mode.
type Thinking string

// Thinking modes. In [Model.Thinking] the empty value means the model has no
// thinking switch; in [Options.Thinking] it means "the model's default".
const (
	ThinkingDefault  Thinking = ""
	ThinkingEnabled  Thinking = "enabled"
	ThinkingDisabled Thinking = "disabled"
)

// Validate reports whether t is one of the defined modes.
func (t Thinking) Validate() error {
	switch t {
	case ThinkingDefault, ThinkingEnabled, ThinkingDisabled:
		return nil
	}
	return fmt.Errorf("thinking %q: must be %q or %q", string(t), ThinkingEnabled, ThinkingDisabled)
}

// Options are per-request model options. Zero values mean "model default".
// An option the route's model cannot honour makes the stream finish with an
// error whose code is [CodeUnsupportedOption].
type Options struct {
	// Thinking overrides the model's default thinking mode.
	Thinking Thinking `json:"thinking,omitempty"`
	// ReasoningEffort is passed through to providers that support it
	// (DeepSeek V4: "high", "max"; OpenAI: "low", "medium", "high"). Ignored
	// when thinking is disabled.
	ReasoningEffort string `json:"reasoningEffort,omitempty"`
	// MaxOutputTokens caps the reply, in tokens; 0 leaves the provider default.
	MaxOutputTokens int64 `json:"maxOutputTokens,omitempty"`
}

// Request is one model call.
type Request struct {
	// Model is a route: "provider/model", "provider/alias", or just
	// "provider" for the route's default model. The [Service] resolves it;
	// adapters receive the bare canonical model name.
	Model string `json:"model"`
	// Messages is the conversation, system prompt first.
	Messages []Message `json:"messages"`
	// Tools lists the tools the model may call, in presentation order.
	Tools []ToolSchema `json:"tools,omitempty"`
	// Options are per-request overrides.
	Options Options `json:"options,omitzero"`
}

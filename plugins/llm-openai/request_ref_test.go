package llmopenai

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/dshgo/harness/services/llm"
)

// buildParams translates a provider-neutral request into chat-completions
// parameters. opts are the effective options (see llm.EffectiveOptions).
func buildParams(model string, req llm.Request, opts llm.Options) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(model),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	for i, m := range req.Messages {
		wm, err := wireMessage(m, opts.Thinking == llm.ThinkingEnabled)
		if err != nil {
			return p, fmt.Errorf("messages[%d]: %w", i, err)
		}
		p.Messages = append(p.Messages, wm)
	}
	for i, t := range req.Tools {
		def := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			def.Description = openai.String(t.Description)
		}
		if len(t.Parameters) == 0 {
			def.Parameters = openai.FunctionParameters{"type": "object", "properties": map[string]any{}}
		} else {
			// Sent verbatim: decoding the schema into a map only to encode
			// it again costs more than the rest of the request together.
			raw := bytes.TrimSpace(t.Parameters)
			if len(raw) == 0 || raw[0] != '{' || !json.Valid(raw) {
				return p, fmt.Errorf("tools[%d] (%s).parameters: not a JSON object", i, t.Name)
			}
			def.SetExtraFields(map[string]any{"parameters": json.RawMessage(raw)})
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(def))
	}
	if opts.MaxOutputTokens > 0 {
		p.MaxTokens = openai.Int(opts.MaxOutputTokens)
	}
	if opts.ReasoningEffort != "" {
		p.ReasoningEffort = shared.ReasoningEffort(opts.ReasoningEffort)
	}
	if opts.Thinking != llm.ThinkingDefault {
		p.SetExtraFields(map[string]any{"thinking": map[string]any{"type": string(opts.Thinking)}})
	}
	return p, nil
}

// wireMessage translates one message. thinking reports whether the request
// runs in thinking mode.
func wireMessage(m llm.Message, thinking bool) (openai.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case llm.RoleSystem:
		return openai.SystemMessage(m.Content), nil
	case llm.RoleUser:
		return openai.UserMessage(m.Content), nil
	case llm.RoleTool:
		if m.ToolCallID == "" {
			return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("tool message: toolCallId is required")
		}
		return openai.ToolMessage(m.Content, m.ToolCallID), nil
	case llm.RoleAssistant:
		a := openai.ChatCompletionAssistantMessageParam{}
		if m.Content != "" {
			a.Content.OfString = openai.String(m.Content)
		}
		for _, tc := range m.ToolCalls {
			args := tc.Arguments
			if args == "" {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID:       tc.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args},
				},
			})
		}
		extra := map[string]any{}
		if m.Content == "" {
			extra["content"] = nil
		}
		// DeepSeek thinking mode requires the reasoning of turns that made
		// tool calls to be sent back (bug case B14), and rejects such a turn
		// without the field even when its reasoning was empty; turns without
		// tool calls may leave it out, which keeps requests small.
		if len(m.ToolCalls) > 0 && (m.Reasoning != "" || thinking) {
			extra["reasoning_content"] = m.Reasoning
		}
		if len(extra) > 0 {
			a.SetExtraFields(extra)
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	}
	return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("role %q: must be system, user, assistant or tool", m.Role)
}

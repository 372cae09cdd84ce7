package llmopenai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/dshgo/harness/services/llm"
)

// encodeRequest builds the chat-completions request body (stream on) for
// a provider-neutral request. opts are the effective options (see
// llm.EffectiveOptions).
//
// The body is byte for byte what openai-go's ChatCompletionNewParams
// encoder and its WithJSONSet("stream", true) produce for the same request
// (field order, escaping, compacted schemas; TestRequestBodyMatchesOpenAIGo
// holds the two together), written directly: openai-go's reflective
// encoder of the whole history dominated the agent's step time.
func encodeRequest(model string, req llm.Request, opts llm.Options) ([]byte, error) {
	size := 256
	for _, m := range req.Messages {
		size += len(m.Content) + len(m.Reasoning) + 64
		for _, tc := range m.ToolCalls {
			size += len(tc.Arguments) + len(tc.ID) + len(tc.Name) + 64
		}
	}
	for _, t := range req.Tools {
		size += len(t.Name) + len(t.Description) + len(t.Parameters) + 64
	}
	b := make([]byte, 0, size+size/16)
	b = append(b, '{')
	if len(req.Messages) > 0 {
		b = append(b, `"messages":[`...)
		for i, m := range req.Messages {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendMessage(b, m, opts.Thinking == llm.ThinkingEnabled); err != nil {
				return nil, fmt.Errorf("messages[%d]: %w", i, err)
			}
		}
		b = append(b, "],"...)
	}
	b = append(b, `"model":`...)
	b = appendString(b, model)
	if opts.MaxOutputTokens > 0 {
		b = append(b, `,"max_tokens":`...)
		b = strconv.AppendInt(b, opts.MaxOutputTokens, 10)
	}
	if opts.ReasoningEffort != "" {
		b = append(b, `,"reasoning_effort":`...)
		b = appendString(b, opts.ReasoningEffort)
	}
	b = append(b, `,"stream_options":{"include_usage":true}`...)
	if len(req.Tools) > 0 {
		b = append(b, `,"tools":[`...)
		for i, t := range req.Tools {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"function":{"name":`...)
			b = appendString(b, t.Name)
			if t.Description != "" {
				b = append(b, `,"description":`...)
				b = appendString(b, t.Description)
			}
			b = append(b, `,"parameters":`...)
			if len(t.Parameters) == 0 {
				b = append(b, `{"properties":{},"type":"object"}`...)
			} else {
				// Sent as given, compacted (and HTML-escaped, as
				// encoding/json does for raw messages).
				raw := bytes.TrimSpace(t.Parameters)
				var ok bool
				if len(raw) > 0 && raw[0] == '{' {
					b, ok = appendCompactHTML(b, raw)
				}
				if !ok {
					return nil, fmt.Errorf("tools[%d] (%s).parameters: not a JSON object", i, t.Name)
				}
			}
			b = append(b, `},"type":"function"}`...)
		}
		b = append(b, ']')
	}
	if opts.Thinking != llm.ThinkingDefault {
		b = append(b, `,"thinking":{"type":`...)
		b = appendString(b, string(opts.Thinking))
		b = append(b, '}')
	}
	b = append(b, `,"stream":true}`...)
	return b, nil
}

// appendMessage appends one message. thinking reports whether the request
// runs in thinking mode.
func appendMessage(b []byte, m llm.Message, thinking bool) ([]byte, error) {
	switch m.Role {
	case llm.RoleSystem, llm.RoleUser:
		b = append(b, `{"content":`...)
		b = appendString(b, m.Content)
		b = append(b, `,"role":`...)
		b = appendString(b, string(m.Role))
		return append(b, '}'), nil
	case llm.RoleTool:
		if m.ToolCallID == "" {
			return b, fmt.Errorf("tool message: toolCallId is required")
		}
		b = append(b, `{"content":`...)
		b = appendString(b, m.Content)
		b = append(b, `,"tool_call_id":`...)
		b = appendString(b, m.ToolCallID)
		return append(b, `,"role":"tool"}`...), nil
	case llm.RoleAssistant:
		b = append(b, '{')
		if m.Content != "" {
			b = append(b, `"content":`...)
			b = appendString(b, m.Content)
			b = append(b, ',')
		}
		if len(m.ToolCalls) > 0 {
			b = append(b, `"tool_calls":[`...)
			for i, tc := range m.ToolCalls {
				if i > 0 {
					b = append(b, ',')
				}
				args := tc.Arguments
				if args == "" {
					args = "{}"
				}
				b = append(b, `{"id":`...)
				b = appendString(b, tc.ID)
				b = append(b, `,"function":{"arguments":`...)
				b = appendString(b, args)
				b = append(b, `,"name":`...)
				b = appendString(b, tc.Name)
				b = append(b, `},"type":"function"}`...)
			}
			b = append(b, "],"...)
		}
		b = append(b, `"role":"assistant"`...)
		if m.Content == "" {
			b = append(b, `,"content":null`...)
		}
		// DeepSeek thinking mode requires the reasoning of turns that made
		// tool calls to be sent back (bug case B14), and rejects such a turn
		// without the field even when its reasoning was empty; turns without
		// tool calls may leave it out, which keeps requests small.
		if len(m.ToolCalls) > 0 && (m.Reasoning != "" || thinking) {
			b = append(b, `,"reasoning_content":`...)
			b = appendExtraString(b, m.Reasoning)
		}
		return append(b, '}'), nil
	}
	return b, fmt.Errorf("role %q: must be system, user, assistant or tool", m.Role)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string the way encoding/json does
// without HTML escaping: invalid UTF-8 becomes U+FFFD, U+2028 and U+2029
// are escaped, control characters use \b \f \n \r \t or \u00XX.
func appendString(b []byte, s string) []byte { return appendJSONString(b, s, false) }

// appendStringHTML is appendString with <, > and & escaped as well
// (encoding/json's default).
func appendStringHTML(b []byte, s string) []byte { return appendJSONString(b, s, true) }

// appendExtraString appends s the way openai-go encodes a string extra
// field (through sjson): as is when it holds only printable ASCII other
// than '"' and '\\', otherwise with encoding/json's defaults (HTML
// escaping included).
func appendExtraString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > 0x7f || c == '"' || c == '\\' {
			return appendStringHTML(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendJSONString(b []byte, s string, html bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!html || (c != '<' && c != '>' && c != '&')) {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += n
			start = i
			continue
		}
		i += n
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendCompactHTML appends JSON src compacted, with <, >, &, U+2028 and
// U+2029 escaped (encoding/json's treatment of a json.RawMessage). It
// reports false, leaving b as it was, when src is not valid JSON.
func appendCompactHTML(b []byte, src []byte) ([]byte, bool) {
	n := len(b)
	out := bytes.NewBuffer(b)
	if json.Compact(out, src) != nil {
		return b[:n], false
	}
	b = out.Bytes()
	if !bytes.ContainsAny(b[n:], "<>&\u2028\u2029") {
		return b, true
	}
	var esc bytes.Buffer
	json.HTMLEscape(&esc, b[n:])
	return append(b[:n], esc.Bytes()...), true
}

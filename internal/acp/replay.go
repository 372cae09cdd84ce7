package acp

import (
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/tools"
)

// replay is a stored session's conversation as the session updates a
// client shows on session/load, in the log's order: the person's prompts
// (user_message_chunk; plugin-sourced context is left out), each step's
// reasoning and text (agent_thought_chunk, agent_message_chunk), each
// tool call with its final presentation (tool_call then
// tool_call_update, with the plan a call set), and failed model calls as
// notices. The log keeps a result's presentation without its content, so
// a command's or a generic tool's call shows the end of the text its
// result gave the model; an edit shows its title and locations, not its
// diff. A call the log has no result for (an interrupted turn) ends
// failed.
func replay(recs []agent.Record, terminal bool) []sdk.SessionUpdate {
	m := newMapper(terminal)
	var out []sdk.SessionUpdate
	for _, r := range recs {
		out = append(out, replayRecord(m, r)...)
	}
	return append(out, m.unfinished("interrupted: the session's turn ended before the call's result")...)
}

func replayRecord(m *mapper, r agent.Record) []sdk.SessionUpdate {
	switch r.Type {
	case agent.RecordUser:
		if r.Message != nil && r.Source == "" && r.Message.Content != "" {
			return []sdk.SessionUpdate{sdk.UpdateUserMessageText(r.Message.Content)}
		}
	case agent.RecordAssistant:
		if r.Message == nil {
			return nil
		}
		var out []sdk.SessionUpdate
		if r.Message.Reasoning != "" {
			out = append(out, sdk.UpdateAgentThoughtText(r.Message.Reasoning))
		}
		if strings.TrimSpace(r.Message.Content) != "" {
			out = append(out, sdk.UpdateAgentMessageText(r.Message.Content))
		}
		return out
	case agent.RecordToolCall:
		p := tools.Present(nil, tools.PresentCall{ID: r.CallID, Name: r.Name, Arguments: r.Arguments, Cwd: ""})
		return m.call(&p)
	case agent.RecordToolResult:
		text := resultText(r)
		p := r.Presentation
		if p == nil {
			p = &tools.Presentation{ToolCallID: r.CallID, Status: tools.StatusCompleted}
			if r.IsError {
				p.Fail(strings.TrimPrefix(text, "Error: "))
			}
		} else {
			c := *p
			p = &c
		}
		if p.Content == nil && text != "" {
			switch p.Kind {
			case tools.KindExecute, tools.KindOther, "":
				p.Content = []tools.ToolCallContent{tools.TextContent(tools.TailBytes(text, tools.MaxTerminalOutput))}
			}
		}
		return m.result(&agent.ToolResultEvent{CallID: r.CallID, Name: r.Name, Content: text, IsError: r.IsError, Presentation: p})
	case agent.RecordError:
		if r.Failure != "" {
			return []sdk.SessionUpdate{sdk.UpdateAgentMessageText(notice(r.Failure))}
		}
	}
	return nil
}

// resultText is the text a tool result showed the model.
func resultText(r agent.Record) string {
	if r.Message != nil && r.Message.Content != "" {
		return r.Message.Content
	}
	var b strings.Builder
	for _, c := range r.Content {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

package acp

import (
	"encoding/json"
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
	r := replayer{m: newMapper(terminal), calls: map[string]agent.Record{}}
	var out []sdk.SessionUpdate
	for _, rec := range recs {
		out = append(out, r.record(rec)...)
	}
	// Calls without a result: announced, then failed.
	for _, id := range r.order {
		if c, ok := r.calls[id]; ok {
			p := tools.Present(nil, tools.PresentCall{ID: c.CallID, Name: c.Name, Arguments: c.Arguments})
			out = append(out, r.m.call(&p)...)
		}
	}
	return append(out, r.m.unfinished("interrupted: the session's turn ended before the call's result")...)
}

// replayer replays one log: a call is announced at its result, with the
// title, kind and locations its logged presentation has.
type replayer struct {
	m     *mapper
	calls map[string]agent.Record // tool/call records awaiting their result, by call id
	order []string                // their ids, in the log's order
}

func (r *replayer) record(rec agent.Record) []sdk.SessionUpdate {
	switch rec.Type {
	case agent.RecordUser:
		if rec.Message != nil && rec.Source == "" && rec.Message.Content != "" {
			return []sdk.SessionUpdate{sdk.UpdateUserMessageText(rec.Message.Content)}
		}
	case agent.RecordAssistant:
		return assistantUpdates(rec)
	case agent.RecordToolCall:
		if _, ok := r.calls[rec.CallID]; !ok {
			r.order = append(r.order, rec.CallID)
		}
		r.calls[rec.CallID] = rec
	case agent.RecordToolResult:
		return r.result(rec)
	case agent.RecordError:
		if rec.Failure != "" {
			return []sdk.SessionUpdate{sdk.UpdateAgentMessageText(notice(rec.Failure))}
		}
	}
	return nil
}

// assistantUpdates are a step's reasoning and text.
func assistantUpdates(rec agent.Record) []sdk.SessionUpdate {
	if rec.Message == nil {
		return nil
	}
	var out []sdk.SessionUpdate
	if rec.Message.Reasoning != "" {
		out = append(out, sdk.UpdateAgentThoughtText(rec.Message.Reasoning))
	}
	if strings.TrimSpace(rec.Message.Content) != "" {
		out = append(out, sdk.UpdateAgentMessageText(rec.Message.Content))
	}
	return out
}

// result announces the call rec answers (pending, with its arguments as
// raw input) and finishes it with its logged presentation.
func (r *replayer) result(rec agent.Record) []sdk.SessionUpdate {
	text := resultText(rec)
	var final tools.Presentation
	if rec.Presentation != nil {
		final = *rec.Presentation
	} else {
		final = tools.Presentation{ToolCallID: rec.CallID, Title: rec.Name, Kind: tools.KindOther, Status: tools.StatusCompleted}
		if rec.IsError {
			final.Fail(strings.TrimPrefix(text, "Error: "))
		}
	}
	if final.Content == nil && text != "" {
		switch final.Kind {
		case tools.KindExecute, tools.KindOther, "":
			final.Content = []tools.ToolCallContent{tools.TextContent(tools.TailBytes(text, tools.MaxTerminalOutput))}
		}
	}
	var out []sdk.SessionUpdate
	if c, ok := r.calls[rec.CallID]; ok {
		delete(r.calls, rec.CallID)
		pending := tools.Presentation{ToolCallID: rec.CallID, Title: final.Title, Kind: final.Kind, Status: tools.StatusPending, Locations: final.Locations}
		if json.Valid([]byte(c.Arguments)) {
			pending.RawInput = json.RawMessage(c.Arguments)
		}
		out = r.m.call(&pending)
	}
	return append(out, r.m.result(&agent.ToolResultEvent{CallID: rec.CallID, Name: rec.Name, Content: text, IsError: rec.IsError, Presentation: &final})...)
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

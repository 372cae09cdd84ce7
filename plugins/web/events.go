package web

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/tools"
)

// Event types the web app adds to the agent's (sent on the same stream).
const (
	// EventApproval: a tool call waits for an answer (Approval set).
	EventApproval = "approval"
	// EventApprovalDone: an approval was answered or withdrawn (Approval.ID, Answer).
	EventApprovalDone = "approval_done"
	// EventQueue: the prompts waiting for the running turn (Queue).
	EventQueue = "queue"
	// EventBusy: a turn started (Busy true) or the session went idle.
	EventBusy = "busy"
	// EventReset: the client must clear its view; the whole backlog follows.
	EventReset = "reset"
	// EventSubagent: a child card in the parent's conversation (Subagent).
	EventSubagent = "subagent"
	// EventReadOnly: the session takes no input here (Reason says why).
	EventReadOnly = "readonly"
	// EventMarkdown: the assistant message just sent, rendered from
	// markdown to sanitised HTML (HTML); it follows that message's event.
	EventMarkdown = "markdown"
	// EventFigures: the session's model, context use, tokens and cost
	// (Figures), as the TUI's status bar shows them.
	EventFigures = "figures"
)

// Figures are what the footer shows: the model route, the context in use
// (the last usage event's ContextTokens, or a compaction's tokens after)
// against the model's window, the session's total usage and its cost at
// the model's prices.
type Figures struct {
	Model         string    `json:"model,omitempty"`
	ContextTokens int64     `json:"contextTokens"`
	ContextWindow int64     `json:"contextWindow,omitempty"`
	Total         llm.Usage `json:"total"`
	// Estimated: the last usage was the harness's estimate (the provider
	// reported none).
	Estimated bool `json:"estimated,omitempty"`
	// Cost is the total's price in USD; nil when the model's prices are
	// unknown.
	Cost *float64 `json:"cost,omitempty"`
}

// Approval is an ask shown in the browser.
type Approval struct {
	ID        string `json:"id"`
	Tool      string `json:"tool"`
	CallID    string `json:"callId"`
	Arguments string `json:"arguments"`
	Reason    string `json:"reason,omitempty"`
	// Always says what "always" grants: the rules it adds to the session's
	// allow list, or this exact call when the policy suggested none.
	Always      string   `json:"always"`
	AlwaysRules []string `json:"alwaysRules,omitempty"`
	// Labels are the question's own words for its answers (a plan
	// approval's), nil for the generic ones.
	Labels *tools.ApprovalLabels `json:"labels,omitempty"`
}

// webEvent is an event of the web app's own.
type webEvent struct {
	V         int       `json:"v"`
	Type      string    `json:"type"`
	SessionID string    `json:"sessionId,omitempty"`
	Approval  *Approval `json:"approval,omitempty"`
	Answer    string    `json:"answer,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	Queue     []string  `json:"queue,omitempty"`
	Busy      bool      `json:"busy"`
	Subagent  *Subagent `json:"subagent,omitempty"`
	HTML      string    `json:"html,omitempty"`
	Figures   *Figures  `json:"figures,omitempty"`
}

// encodeAgentEvent is the wire form of e, the stream-json line that
// `harness run --output stream-json` prints (agent.Event.MarshalJSON).
func encodeAgentEvent(e agent.Event) []byte {
	b, err := json.Marshal(e)
	if err != nil {
		b, _ = json.Marshal(webEvent{V: agent.EventVersion, Type: string(agent.EventNotice)})
	}
	return b
}

func encodeWebEvent(e webEvent) []byte {
	e.V = agent.EventVersion
	b, _ := json.Marshal(e)
	return b
}

// eventsOfRecords rebuilds the events a client shows from a session log:
// the user's prompts, assistant messages (whole, no deltas), tool calls and
// results, usage, states, compactions and errors. Plugin-sourced user
// messages are kept with their source (the client may hide them).
func eventsOfRecords(id string, recs []agent.Record) []agent.Event {
	var out []agent.Event
	for _, r := range recs {
		e := agent.Event{SessionID: id, Turn: r.Turn, Step: r.Step}
		switch r.Type {
		case agent.RecordSession:
			e.Type, e.Cwd, e.Model = agent.EventSession, r.Cwd, r.Model
		case agent.RecordUser:
			if r.Message == nil {
				continue
			}
			e.Type, e.Text, e.Source = agent.EventUser, r.Message.Content, r.Source
		case agent.RecordAssistant:
			if r.Message == nil {
				continue
			}
			m := *r.Message
			e.Type, e.Message = agent.EventAssistant, &m
		case agent.RecordToolCall:
			e.Type, e.ToolCall = agent.EventToolCall, &agent.ToolCallEvent{ID: r.CallID, Name: r.Name, Arguments: r.Arguments}
		case agent.RecordToolResult:
			e.Type = agent.EventToolResult
			text := contentText(r)
			e.ToolResult = &agent.ToolResultEvent{CallID: r.CallID, Name: r.Name, Content: text, IsError: r.IsError, Error: r.Error, Meta: r.Meta,
				Presentation: loggedPresentation(r.Presentation, text)}
		case agent.RecordUsage:
			e.Type, e.Usage, e.Estimated = agent.EventUsage, r.Usage, r.Estimated
		case agent.RecordState:
			e.Type, e.Key, e.State = agent.EventState, r.Key, r.State
		case agent.RecordCompaction:
			e.Type = agent.EventCompaction
			e.Compaction = &agent.CompactionInfo{Trigger: r.Trigger, Summarized: r.Summarized, Kept: r.Kept, TokensBefore: r.TokensBefore, TokensAfter: r.TokensAfter}
		case agent.RecordError:
			e.Type, e.Text = agent.EventNotice, r.Failure
		default:
			continue
		}
		out = append(out, e)
	}
	return out
}

// visibleRecords is recs without what a conversation rewind took away:
// at each rewind record to turn T, the records of turn T and later
// before it (the log keeps them; the conversation no longer has them).
func visibleRecords(recs []agent.Record) []agent.Record {
	out := make([]agent.Record, 0, len(recs))
	for _, r := range recs {
		if r.Type != agent.RecordRewind {
			out = append(out, r)
			continue
		}
		out = slices.DeleteFunc(out, func(o agent.Record) bool { return o.Turn >= r.Turn })
	}
	return out
}

// loggedPresentation is the presentation a logged result is shown with:
// the log keeps a result's presentation without its content (the diff,
// the terminal), so a command's or a generic tool's card shows the end of
// the text its result gave the model, as the TUI does for a resumed
// session; a file tool's card shows its summary only (its text is the
// model's envelope, not output).
func loggedPresentation(p *tools.Presentation, text string) *tools.Presentation {
	if p == nil || p.Content != nil || text == "" {
		return p
	}
	switch p.Kind {
	case tools.KindExecute, tools.KindOther, "":
		c := *p
		c.Content = []tools.ToolCallContent{tools.TextContent(tools.TailBytes(text, tools.MaxTerminalOutput))}
		return &c
	}
	return p
}

// contentText is the text a tool result showed the model.
func contentText(r agent.Record) string {
	if r.Message != nil && r.Message.Content != "" {
		return r.Message.Content
	}
	var b bytes.Buffer
	for _, c := range r.Content {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

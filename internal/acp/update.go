package acp

import (
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/tools"
)

// Session update kinds (ACP's sessionUpdate discriminator).
const (
	updateToolCall       = "tool_call"
	updateToolCallUpdate = "tool_call_update"
)

// mapper turns one session's agent events into ACP session updates. It
// keeps the presentation of every call announced and not yet finished, so
// that a permission request can show the call and the end of a cut-short
// turn can fail the calls that never got a result. It is not safe for
// concurrent use: the session's observer calls it, one event at a time,
// and the prompt's goroutine after the turn ended.
type mapper struct {
	// terminal is set when the client shows terminal content it did not
	// create (it announced the terminal_output _meta capability); else a
	// command's output is sent as a text block.
	terminal bool
	// open holds the latest presentation of each announced call, by id,
	// until its result.
	open map[string]*tools.Presentation
	// order lists the ids of open, in announcement order.
	order []string
}

func newMapper(terminal bool) *mapper {
	return &mapper{terminal: terminal, open: map[string]*tools.Presentation{}}
}

// updates returns the session updates of e, in order: assistant text and
// reasoning deltas as message and thought chunks, tool calls as tool_call
// (pending), progress and results as tool_call_update (in_progress,
// completed, failed; a plan the call sets follows as a plan update),
// notices and budget warnings as message chunks. Events of subagents
// (Depth > 0) and the rest give none.
func (m *mapper) updates(e agent.Event) []sdk.SessionUpdate {
	if e.Depth > 0 {
		return nil
	}
	switch e.Type {
	case agent.EventText:
		if e.Text != "" {
			return []sdk.SessionUpdate{sdk.UpdateAgentMessageText(e.Text)}
		}
	case agent.EventReasoning:
		if e.Text != "" {
			return []sdk.SessionUpdate{sdk.UpdateAgentThoughtText(e.Text)}
		}
	case agent.EventToolCall:
		if tc := e.ToolCall; tc != nil {
			p := tc.Presentation
			if p == nil {
				g := tools.Present(nil, tools.PresentCall{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
				p = &g
			}
			return m.call(p)
		}
	case agent.EventToolProgress:
		if tp := e.ToolProgress; tp != nil && tp.Presentation != nil && m.open[tp.CallID] != nil {
			return m.update(tp.Presentation)
		}
	case agent.EventToolResult:
		if tr := e.ToolResult; tr != nil {
			return m.result(tr)
		}
	case agent.EventNotice:
		if e.Text != "" {
			return []sdk.SessionUpdate{sdk.UpdateAgentMessageText(notice(e.Text))}
		}
	case agent.EventBudget:
		if e.Budget != nil && e.Budget.Text != "" {
			return []sdk.SessionUpdate{sdk.UpdateAgentMessageText(notice(e.Budget.Text))}
		}
	}
	return nil
}

// notice is a harness notice as message text, on its own line.
func notice(text string) string {
	return "\n\n> harness: " + strings.TrimSpace(text) + "\n\n"
}

// call announces the call p presents (tool_call) and remembers it.
func (m *mapper) call(p *tools.Presentation) []sdk.SessionUpdate {
	if _, ok := m.open[p.ToolCallID]; !ok {
		m.order = append(m.order, p.ToolCallID)
	}
	c := *p
	m.open[p.ToolCallID] = &c
	return []sdk.SessionUpdate{m.convert(updateToolCall, p)}
}

// update sends a later presentation of an open call (tool_call_update) and
// merges it into the one remembered.
func (m *mapper) update(p *tools.Presentation) []sdk.SessionUpdate {
	if prev := m.open[p.ToolCallID]; prev != nil {
		merge(prev, p)
	}
	return []sdk.SessionUpdate{m.convert(updateToolCallUpdate, p)}
}

// result sends a call's final presentation, then the plan it sets.
func (m *mapper) result(r *agent.ToolResultEvent) []sdk.SessionUpdate {
	p := r.Presentation
	if p == nil {
		p = &tools.Presentation{ToolCallID: r.CallID, Status: tools.StatusCompleted}
		if r.IsError || r.Denied {
			p.Fail(strings.TrimPrefix(r.Content, "Error: "))
		}
		if r.Content != "" {
			p.Content = []tools.ToolCallContent{tools.TextContent(tools.HeadBytes(r.Content, tools.MaxTerminalOutput))}
		}
	}
	var out []sdk.SessionUpdate
	if _, ok := m.open[r.CallID]; !ok {
		// A result without its call (a replayed log cut short): announce it.
		out = m.call(&tools.Presentation{ToolCallID: r.CallID, Title: r.Name, Kind: tools.KindOther, Status: tools.StatusPending})
	}
	out = append(out, m.convert(updateToolCallUpdate, p))
	m.close(r.CallID)
	if plan := p.Plan(); plan != nil {
		out = append(out, planUpdate(plan))
	}
	return out
}

// close forgets call id.
func (m *mapper) close(id string) {
	delete(m.open, id)
	for i, o := range m.order {
		if o == id {
			m.order = append(m.order[:i], m.order[i+1:]...)
			break
		}
	}
}

// presentation returns the latest presentation of open call id (nil when
// the call is not open).
func (m *mapper) presentation(id string) *tools.Presentation {
	if p := m.open[id]; p != nil {
		c := *p
		return &c
	}
	return nil
}

// unfinished fails every call still open, with reason (a turn that
// ended, cancelled or failed, before their results), and forgets them.
func (m *mapper) unfinished(reason string) []sdk.SessionUpdate {
	var out []sdk.SessionUpdate
	for _, id := range m.order {
		p := &tools.Presentation{ToolCallID: id}
		p.Fail(reason)
		out = append(out, m.convert(updateToolCallUpdate, p))
	}
	clear(m.open)
	m.order = nil
	return out
}

// merge applies later presentation p to prev: the fields p sets replace
// prev's (ACP's tool_call_update).
func merge(prev, p *tools.Presentation) {
	if p.Title != "" {
		prev.Title = p.Title
	}
	if p.Kind != "" {
		prev.Kind = p.Kind
	}
	if p.Status != "" {
		prev.Status = p.Status
	}
	if p.Content != nil {
		prev.Content = p.Content
	}
	if p.Locations != nil {
		prev.Locations = p.Locations
	}
}

// convert is presentation p as a session update of kind (tool_call or
// tool_call_update), field for field: the presentation is ACP's shape
// (same names, the harness's additions in _meta), so nothing is decoded or
// dropped. Terminal content becomes a text block unless the client shows
// terminals it did not create; the raw input goes with the call only.
func (m *mapper) convert(kind string, p *tools.Presentation) sdk.SessionUpdate {
	content := p.Content
	if !m.terminal {
		content = terminalsAsText(content)
	}
	items := toolContent(content)
	locs := locations(p.Locations)
	meta := presentationMeta(p.Meta)
	var raw any
	if p.RawOutput != nil {
		raw = p.RawOutput
	}
	if kind == updateToolCall {
		title := p.Title
		if title == "" {
			title = p.ToolCallID
		}
		var in any
		if p.RawInput != nil {
			in = p.RawInput
		}
		return sdk.SessionUpdate{ToolCall: &sdk.SessionUpdateToolCall{SessionUpdate: updateToolCall, ToolCallId: sdk.ToolCallId(p.ToolCallID),
			Title: title, Kind: sdk.ToolKind(p.Kind), Status: sdk.ToolCallStatus(p.Status), Content: items, Locations: locs,
			RawInput: in, RawOutput: raw, Meta: meta}}
	}
	u := &sdk.SessionToolCallUpdate{SessionUpdate: updateToolCallUpdate, ToolCallId: sdk.ToolCallId(p.ToolCallID),
		Content: items, Locations: locs, RawOutput: raw, Meta: meta}
	if p.Title != "" {
		u.Title = &p.Title
	}
	if p.Kind != "" {
		k := sdk.ToolKind(p.Kind)
		u.Kind = &k
	}
	if p.Status != "" {
		st := sdk.ToolCallStatus(p.Status)
		u.Status = &st
	}
	return sdk.SessionUpdate{ToolCallUpdate: u}
}

// toolContent is content as ACP's tool call content (nil stays nil: the
// update leaves the content as it was).
func toolContent(content []tools.ToolCallContent) []sdk.ToolCallContent {
	if content == nil {
		return nil
	}
	out := make([]sdk.ToolCallContent, 0, len(content))
	for _, c := range content {
		switch c.Type {
		case tools.ContentDiff:
			d := &sdk.ToolCallContentDiff{Type: tools.ContentDiff, Path: c.Path, OldText: c.OldText}
			if c.NewText != nil {
				d.NewText = *c.NewText
			}
			out = append(out, sdk.ToolCallContent{Diff: d})
		case tools.ContentTerminal:
			out = append(out, sdk.ToolCallContent{Terminal: &sdk.ToolCallContentTerminal{Type: tools.ContentTerminal, TerminalId: c.TerminalID, Meta: terminalMeta(c.Terminal)}})
		default:
			var block sdk.ContentBlock
			switch {
			case c.Content == nil:
				block = sdk.TextBlock("")
			case c.Content.Type == "image":
				block = sdk.ImageBlock(c.Content.Data, c.Content.MimeType)
			default:
				block = sdk.TextBlock(c.Content.Text)
			}
			out = append(out, sdk.ToolCallContent{Content: &sdk.ToolCallContentContent{Type: tools.ContentBlock, Content: block}})
		}
	}
	return out
}

// terminalMeta is a terminal item's _meta: the output, the exit code and
// the signal (as tools.Terminal's JSON).
func terminalMeta(t *tools.Terminal) map[string]any {
	if t == nil {
		return nil
	}
	m := map[string]any{"output": t.Output}
	if t.ExitCode != nil {
		m["exitCode"] = *t.ExitCode
	}
	if t.Signal != "" {
		m["signal"] = t.Signal
	}
	return m
}

// presentationMeta is the presentation's _meta (as PresentationMeta's
// JSON): the reason, the summary, the plan.
func presentationMeta(pm *tools.PresentationMeta) map[string]any {
	if pm == nil {
		return nil
	}
	m := map[string]any{}
	if pm.Reason != "" {
		m["reason"] = pm.Reason
	}
	if pm.Summary != "" {
		m["summary"] = pm.Summary
	}
	if pm.Plan != nil {
		m["plan"] = pm.Plan
	}
	return m
}

// locations is locs as ACP's (a 0 line is omitted: the whole file).
func locations(locs []tools.Location) []sdk.ToolCallLocation {
	if locs == nil {
		return nil
	}
	out := make([]sdk.ToolCallLocation, 0, len(locs))
	for _, l := range locs {
		loc := sdk.ToolCallLocation{Path: l.Path}
		if l.Line != 0 {
			line := l.Line
			loc.Line = &line
		}
		out = append(out, loc)
	}
	return out
}

// terminalsAsText replaces each terminal item of content by a text block
// with the command's output and how it ended.
func terminalsAsText(content []tools.ToolCallContent) []tools.ToolCallContent {
	var out []tools.ToolCallContent
	for _, c := range content {
		if c.Type != tools.ContentTerminal {
			out = append(out, c)
			continue
		}
		out = append(out, tools.TextContent(terminalText(c.Terminal)))
	}
	if content != nil && out == nil {
		out = []tools.ToolCallContent{}
	}
	return out
}

// terminalText renders a command's output as a fenced block, then its
// exit ("exit code 1", "killed by SIGKILL") when it ended.
func terminalText(t *tools.Terminal) string {
	if t == nil {
		return ""
	}
	var b strings.Builder
	if t.Output != "" {
		fence := "```"
		for strings.Contains(t.Output, fence) {
			fence += "`"
		}
		b.WriteString(fence + "\n" + strings.TrimRight(t.Output, "\n") + "\n" + fence + "\n")
	}
	switch {
	case t.Signal != "":
		fmt.Fprintf(&b, "killed by %s\n", t.Signal)
	case t.ExitCode != nil:
		fmt.Fprintf(&b, "exit code %d\n", *t.ExitCode)
	}
	return b.String()
}

// planUpdate is the agent's whole plan as a plan update.
func planUpdate(plan []tools.PlanEntry) sdk.SessionUpdate {
	entries := make([]sdk.PlanEntry, 0, len(plan))
	for _, e := range plan {
		pr := sdk.PlanEntryPriority(e.Priority)
		if pr == "" {
			pr = sdk.PlanEntryPriorityMedium // ACP requires one; the todo tool does not rank
		}
		st := sdk.PlanEntryStatus(e.Status)
		switch st {
		case sdk.PlanEntryStatusPending, sdk.PlanEntryStatusInProgress, sdk.PlanEntryStatusCompleted:
		default:
			st = sdk.PlanEntryStatusPending
		}
		entries = append(entries, sdk.PlanEntry{Content: e.Content, Priority: pr, Status: st})
	}
	return sdk.SessionUpdate{Plan: &sdk.SessionUpdatePlan{SessionUpdate: "plan", Entries: entries}}
}

package cli

import (
	"fmt"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/tools"
)

// The text output's tool lines, drawn from the calls' presentations
// (tools.Presentation) alone: no tool's arguments are decoded here.

// callLine is the line of a call about to run: "→ <name> <title>" (see
// tools.Label), at most n characters.
func callLine(c *agent.ToolCallEvent, n int) string {
	p := c.Presentation
	if p == nil { // an event from elsewhere (a replayed log): the generic form
		g := tools.Present(nil, tools.PresentCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		p = &g
	}
	return "→ " + clip(oneLine(tools.Label(c.Name, p)), n)
}

// resultLine is the line of a finished call: "✓ name: summary, N ms" or
// "✗ name: reason, N ms" (the reason at most n characters). A call is a
// failure when its presentation says so: a command that timed out, was
// killed or exited non-zero is one although the model's result is not an
// error.
func resultLine(r *agent.ToolResultEvent, n int) string {
	p := finalPresentation(r)
	if p.Status == tools.StatusFailed {
		return fmt.Sprintf("✗ %s: %s, %d ms", r.Name, clip(oneLine(p.Reason()), n), r.DurationMs)
	}
	return fmt.Sprintf("✓ %s: %s, %d ms", r.Name, p.Summary(), r.DurationMs)
}

// finalPresentation is r's presentation, or the generic one when the
// event carries none.
func finalPresentation(r *agent.ToolResultEvent) *tools.Presentation {
	if r.Presentation != nil {
		return r.Presentation
	}
	o := &tools.Outcome{Content: []tools.Content{tools.Text(r.Content)}, IsError: r.IsError, Denied: r.Denied}
	p := tools.Present(nil, tools.PresentCall{ID: r.CallID, Name: r.Name, Outcome: o})
	return &p
}

// toolFailure is one failed call in the json result (toolFailures): the
// tool, its call id and why it failed.
type toolFailure struct {
	ToolName  string `json:"tool_name"`
	ToolUseID string `json:"tool_use_id"`
	Reason    string `json:"reason"`
}

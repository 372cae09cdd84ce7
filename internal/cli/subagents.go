package cli

import (
	"fmt"
	"strings"

	subagentinprocess "github.com/dshgo/harness/plugins/subagent-inprocess"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/sessions"
)

// subagent prints one indented stderr line for a subagent's session start,
// step, tool call, tool result and result (text mode); its streamed text
// is not shown (its final answer is the parent's tool result). The indent
// grows with the depth. p.mu is held.
func (p *printer) subagent(e agent.Event) {
	var line string
	switch e.Type {
	case agent.EventSession:
		line = "agent started · " + e.Model
	case agent.EventStep:
		line = fmt.Sprintf("step %d", e.Step)
	case agent.EventToolCall:
		line = callLine(e.ToolCall, 120)
	case agent.EventToolResult:
		line = "  " + resultLine(e.ToolResult, 160)
	case agent.EventNotice:
		line = "harness: " + e.Text
	case agent.EventResult:
		if r := e.Result; r != nil {
			line = fmt.Sprintf("agent %s · %d steps · %d tokens", r.Reason, r.Steps, r.Usage.TotalTokens)
		}
	}
	if line == "" {
		return
	}
	p.endText()
	p.clearStatus()
	fmt.Fprintf(p.errw, "%s[%s] %s\n", strings.Repeat("  ", e.Depth), shortID(e.SessionID), line)
}

// shortID is the random suffix of a session id ("20261202T061500-1a2b3c4d"
// → "1a2b3c4d"), or the id itself.
func shortID(id string) string {
	if _, suffix, ok := strings.Cut(id, "-"); ok && suffix != "" {
		return suffix
	}
	return id
}

// treeRow is one line of the sessions listing.
type treeRow struct {
	prefix string
	info   sessions.Info
}

// sessionTree orders list (newest first) as a tree: each subagent session
// (origin "subagent") under its parent when the parent is listed,
// indented by depth with "└ "; other sessions keep their order.
func sessionTree(list []sessions.Info) []treeRow {
	listed := make(map[string]bool, len(list))
	for _, s := range list {
		listed[s.ID] = true
	}
	kids := map[string][]sessions.Info{}
	var roots []sessions.Info
	for _, s := range list {
		if s.Origin == subagentinprocess.Origin && s.Parent != "" && listed[s.Parent] && s.Parent != s.ID {
			kids[s.Parent] = append(kids[s.Parent], s)
		} else {
			roots = append(roots, s)
		}
	}
	var rows []treeRow
	seen := map[string]bool{}
	var walk func(s sessions.Info, depth int)
	walk = func(s sessions.Info, depth int) {
		if seen[s.ID] {
			return // a cycle in damaged headers
		}
		seen[s.ID] = true
		prefix := ""
		if depth > 0 {
			prefix = strings.Repeat("  ", depth-1) + "└ "
		}
		rows = append(rows, treeRow{prefix: prefix, info: s})
		for _, k := range kids[s.ID] {
			walk(k, depth+1)
		}
	}
	for _, s := range roots {
		walk(s, 0)
	}
	for _, s := range list {
		walk(s, 0) // parents linked in a cycle (damaged headers): listed flat
	}
	return rows
}

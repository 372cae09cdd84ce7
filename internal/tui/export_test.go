package tui

import (
	tea "charm.land/bubbletea/v2"

	"time"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/tools"
)

// EventMsg wraps an agent event as the message the observer sends.
func EventMsg(e agent.Event) tea.Msg { return eventMsg(e) }

// DropCaches forgets every rendered item (the benchmark's reference: a UI
// that renders the whole transcript per frame).
func (m *Model) DropCaches() { m.tr.setTheme(m.th) }

// CardDiff is the diff a card shows for a call presented as p.
func CardDiff(p tools.Presentation, cwd string) []string {
	return newToolCard(p.ToolCallID, "t", "{}", &p, cwd, time.Time{}).diff
}

package tui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/dshgo/harness/services/agent"
)

// EventMsg wraps an agent event as the message the observer sends.
func EventMsg(e agent.Event) tea.Msg { return eventMsg(e) }

// DropCaches forgets every rendered item (the benchmark's reference: a UI
// that renders the whole transcript per frame).
func (m *Model) DropCaches() { m.tr.setTheme(m.th) }

// ProposedDiff is proposedDiff, for the header test.
func ProposedDiff(name, args, cwd string) []string { return proposedDiff(name, args, cwd) }

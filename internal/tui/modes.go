package tui

import (
	"slices"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/tools"
)

// modeCycle is the order Shift+Tab walks the permission modes in, as in
// Claude Code: default, acceptEdits, plan, and round again. A session that
// opened in another mode (bypassPermissions, dontAsk: a deployer's or a
// flag's choice) keeps it as a fourth stop after plan, so cycling can come
// back to it; the terminal UI offers bypassPermissions only to a session
// that opened in it.
var modeCycle = []string{"default", "acceptEdits", "plan"}

// nextMode is the mode after cur; start is the mode the session opened in.
func nextMode(cur, start string) string {
	cycle := modeCycle
	if !slices.Contains(cycle, start) {
		cycle = append(slices.Clone(cycle), start)
	}
	i := slices.Index(cycle, cur)
	return cycle[(i+1)%len(cycle)] // cur unknown (-1): the first stop
}

// modeSwitch returns the permission service's reporter and switcher, when it
// has both (the permission plugin's).
func modeSwitch(c *core.Context) (tools.ModeReporter, tools.ModeSwitcher, bool) {
	rp, ok := core.Lookup(c, tools.ReadPolicyKey)
	if !ok || rp == nil {
		return nil, nil, false
	}
	mr, ok1 := rp.(tools.ModeReporter)
	sw, ok2 := rp.(tools.ModeSwitcher)
	return mr, sw, ok1 && ok2
}

// cycleMode is Shift+Tab: the open session's permission mode becomes the
// next one of the cycle. The model is told with the next prompt (the
// permission plugin adds a sentence of context); the status bar shows the
// mode at once. A running turn's later calls are judged under the new mode.
func (m *Model) cycleMode() {
	scope := m.scope()
	mr, sw, ok := modeSwitch(m.o.Root)
	if scope == nil || !ok {
		return
	}
	cur := mr.PermissionMode(scope)
	if m.startMode == "" {
		m.startMode = cur
	}
	next := nextMode(cur, m.startMode)
	if err := sw.SetPermissionMode(scope, next); err != nil {
		m.tr.add(&item{kind: kindError, text: "permission mode: " + err.Error(), done: true})
		return
	}
	m.permStr = permissionMode(m.o.Root, scope)
}

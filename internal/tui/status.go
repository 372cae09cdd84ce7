package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/subprocess"
)

// statusLine is the bar at the bottom: model, step, context use, the
// session's prompt-cache hit share (when the provider's cache served any), cost,
// the budget warning (from the last budget event),
// the turn's elapsed time, sandbox and permission mode, and key hints.
func (m *Model) statusLine() string {
	var parts []string
	switch {
	case m.ss != nil:
		parts = append(parts, m.ss.Model().Route())
	case m.opening:
		parts = append(parts, "opening session…")
	}
	if m.turn != nil {
		parts = append(parts, fmt.Sprintf("step %d", m.step), "⏱ "+fmtDur(time.Since(m.turn.started)))
	} else if m.lastTurn > 0 {
		parts = append(parts, "last turn "+fmtDur(m.lastTurn))
	}
	if m.ss != nil && m.ctxTokens > 0 {
		if w := m.ss.Model().ContextWindow; w > 0 {
			parts = append(parts, fmt.Sprintf("ctx %.1f%%", 100*float64(m.ctxTokens)/float64(w)))
		} else {
			parts = append(parts, fmt.Sprintf("ctx %dk", m.ctxTokens/1000))
		}
	}
	if m.total.CacheHitTokens > 0 {
		parts = append(parts, fmt.Sprintf("cache %.0f%%", 100*m.total.CacheHitRatio()))
	}
	if m.ss != nil {
		if p := m.ss.Model().Prices; p.Known() {
			parts = append(parts, fmt.Sprintf("$%.4f", p.Cost(m.total)))
		}
	}
	if b := m.budget; b != nil {
		parts = append(parts, budgetShort(b))
	}
	if m.permStr != "" {
		parts = append(parts, m.permStr)
	}
	if m.sandboxStr != "" {
		parts = append(parts, m.sandboxStr)
	}
	switch {
	case !m.quitAt.IsZero():
		parts = append([]string{"Ctrl+C again to exit"}, parts...)
	case m.turn != nil:
		parts = append([]string{"Esc interrupts"}, parts...)
	}
	line := " " + strings.Join(parts, " · ") + " "
	line = ansi.Truncate(line, m.w, "…")
	if pad := m.w - ansi.StringWidth(line); pad > 0 {
		line += strings.Repeat(" ", pad)
	}
	return m.th.status.Render(line)
}

// budgetShort is the status bar's budget warning: "⚠ budget 83% tokens",
// "⚠ budget exceeded (cost)".
func budgetShort(b *agent.BudgetInfo) string {
	if b.Exceeded {
		return "⚠ budget exceeded (" + b.Kind + ")"
	}
	pct := 0
	if b.Limit > 0 {
		pct = int(b.Projected / b.Limit * 100)
	}
	return fmt.Sprintf("⚠ budget %d%% %s", pct, b.Kind)
}

// permissionMode is "perm MODE" of calls of scope (nil: unscoped) from
// the permission plugin, or "".
func permissionMode(c *core.Context, scope *core.ScopeID) string {
	d, ok := describer(c)
	if !ok {
		return ""
	}
	return "perm " + string(d.InForce(scope).Mode)
}

// sandboxShort is "sandbox MODE" (with "!" when not enforced), or "".
func sandboxShort(c *core.Context) string {
	rt, ok := core.Lookup(c, subprocess.Key)
	if !ok || rt == nil {
		return ""
	}
	pol, rep := rt.Sandbox()
	if pol.Mode == subprocess.SandboxOff || pol.Mode == "" {
		return "sandbox off"
	}
	s := "sandbox " + string(pol.Mode)
	if rep.Enforcement == subprocess.EnforcementNone {
		s += " (not enforced)"
	}
	return s
}

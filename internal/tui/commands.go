package tui

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/plugins/permission"
	"github.com/dshgo/harness/services/commands"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/tools"
)

// runCommand runs a slash command: the front-end commands here, the
// others through the registry (in a command, so a slow one does not block
// the screen).
func (m *Model) runCommand(name, args string) tea.Cmd {
	m.tr.add(&item{kind: kindUser, text: "/" + strings.TrimSpace(name+" "+args), done: true})
	m.scroll = 0
	busy := func() tea.Cmd {
		m.tr.add(&item{kind: kindNotice, text: "/" + name + " waits for the running turn (Esc interrupts it)", done: true})
		return nil
	}
	switch name {
	case "exit", "quit":
		return m.quit()
	case "clear":
		if m.turn != nil {
			return busy()
		}
		m.tr.items = nil
		return m.openSession("", "", "new session")
	case "model":
		return m.modelCommand(args)
	case "resume":
		if m.turn != nil {
			return busy()
		}
		if args != "" {
			return m.openSession(args, "", "resumed "+args)
		}
		return m.sessionsCommand(true)
	case "sessions":
		return m.sessionsCommand(false)
	case "compact":
		if m.turn != nil || m.ss == nil {
			return busy()
		}
		ss := m.ss
		return func() tea.Msg {
			info, err := ss.Compact(context.Background(), args)
			if err != nil {
				return commandMsg{err: fmt.Errorf("compaction: %w", err)}
			}
			return commandMsg{text: fmt.Sprintf("compacted: %d messages summarized, %d kept; context %d → %d tokens", info.Summarized, info.Kept, info.TokensBefore, info.TokensAfter)}
		}
	case "cost":
		m.info(m.costText())
		return nil
	case "context":
		return m.contextCommand()
	case "tools":
		m.info(m.toolsText())
		return nil
	case "permissions":
		m.info(m.permissionsText())
		return nil
	}
	c, ok := m.cmds.Lookup(name)
	if !ok || c.Run == nil {
		m.tr.add(&item{kind: kindError, text: "/" + name + " is not available in the terminal UI", done: true})
		return nil
	}
	inv := commands.Invocation{Args: args}
	if m.ss != nil {
		inv.Session = m.ss
	}
	return func() tea.Msg {
		rep, err := c.Run(context.Background(), inv)
		return commandMsg{text: rep.Text, prompt: rep.Prompt, rewound: rep.Rewound, draft: rep.Draft, err: err}
	}
}

// info adds Markdown command output to the transcript.
func (m *Model) info(md string) {
	m.tr.add(&item{kind: kindInfo, text: md, done: true})
}

func (m *Model) onCommandDone(msg commandMsg) tea.Cmd {
	if msg.rewound && m.ss != nil {
		// The transcript shows the conversation as it is now; the
		// command's note comes after it.
		m.tr.items = nil
		m.cards = map[string]*toolCard{}
		m.replay(m.ss.History())
		m.scroll = 0
	}
	if msg.draft != "" && m.input.Value() == "" {
		m.input.SetValue(msg.draft)
		m.updateCompletion()
	}
	if msg.err != nil {
		m.tr.add(&item{kind: kindError, text: msg.err.Error(), done: true})
		return nil
	}
	if msg.text != "" {
		m.info(msg.text)
	}
	if msg.prompt != "" && m.turn == nil && m.ss != nil {
		return m.startTurn(msg.prompt)
	}
	return nil
}

// modelCommand shows the route and the configured models, or switches
// (reopening the session with the new route).
func (m *Model) modelCommand(route string) tea.Cmd {
	if route == "" {
		var b strings.Builder
		if m.ss != nil {
			fmt.Fprintf(&b, "model: **%s**\n\n", m.ss.Model().Route())
		}
		b.WriteString("| route | context window |\n|---|---|\n")
		for _, md := range m.o.Agent.LLM().Models() {
			fmt.Fprintf(&b, "| `%s/%s` | %d |\n", md.Provider, md.Name, md.ContextWindow)
		}
		b.WriteString("\n`/model ROUTE` switches.")
		m.info(b.String())
		return nil
	}
	if m.turn != nil || m.ss == nil {
		m.tr.add(&item{kind: kindNotice, text: "/model waits for the running turn (Esc interrupts it)", done: true})
		return nil
	}
	if _, err := m.o.Agent.LLM().Resolve(route); err != nil {
		m.tr.add(&item{kind: kindError, text: err.Error(), done: true})
		return nil
	}
	return m.openSession(m.ss.ID(), route, "model "+route)
}

// sessionsCommand lists the stored sessions of the working directory; pick
// opens a picker that resumes the chosen one.
func (m *Model) sessionsCommand(pick bool) tea.Cmd {
	store, cwd := m.o.Agent.Sessions(), m.o.Cwd
	return func() tea.Msg {
		page, err := store.List(context.Background(), sessions.Query{Cwd: cwd, Limit: 30})
		if err != nil {
			return commandMsg{err: fmt.Errorf("sessions: %w", err)}
		}
		return sessionListMsg{list: page.Sessions, pick: pick}
	}
}

type sessionListMsg struct {
	list []sessions.Info
	pick bool
}

func (m *Model) onSessionList(msg sessionListMsg) {
	if len(msg.list) == 0 {
		m.info("no stored sessions for " + m.o.Cwd)
		return
	}
	if msg.pick {
		m.picker = &picker{list: msg.list}
		return
	}
	var b strings.Builder
	b.WriteString("| id | updated | turns | title |\n|---|---|---|---|\n")
	for _, s := range msg.list {
		fmt.Fprintf(&b, "| `%s` | %s | %d | %s |\n", s.ID, s.Updated.Local().Format("2006-01-02 15:04"), s.Turns, strings.ReplaceAll(s.Title, "|", "/"))
	}
	b.WriteString("\n`/resume ID` (or `/resume` to pick) continues one.")
	m.info(b.String())
}

// picker chooses a stored session to resume.
type picker struct {
	list []sessions.Info
	sel  int
}

func (p *picker) view(m *Model) []string {
	lines := []string{m.th.accent.Render("Resume a session") + m.th.dim.Render("  ↑/↓ choose · Enter resume · Esc cancel")}
	n := max(3, m.h/2)
	first := max(0, p.sel-n+1)
	for i := first; i < len(p.list) && i < first+n; i++ {
		s := p.list[i]
		line := fmt.Sprintf("%s  %s  %3d turns  %s", s.Updated.Local().Format("01-02 15:04"), s.ID, s.Turns, s.Title)
		line = ansi.Truncate(visible(line), m.w-2, "…")
		if i == p.sel {
			lines = append(lines, m.th.chosen.Render("› "+line))
		} else {
			lines = append(lines, "  "+line)
		}
	}
	return lines
}

func (m *Model) pickerKey(k tea.KeyPressMsg) tea.Cmd {
	p := m.picker
	switch k.String() {
	case "up", "k":
		p.sel = (p.sel + len(p.list) - 1) % len(p.list)
	case "down", "j":
		p.sel = (p.sel + 1) % len(p.list)
	case "esc", "q":
		m.picker = nil
	case "enter":
		m.picker = nil
		id := p.list[p.sel].ID
		if m.ss != nil && id == m.ss.ID() {
			return nil
		}
		m.tr.items = nil
		return m.openSession(id, "", "resumed "+id)
	}
	return nil
}

// costText is /cost: the session's tokens and, with prices, its cost.
func (m *Model) costText() string {
	u := m.total
	var b strings.Builder
	fmt.Fprintf(&b, "tokens this session: **%d** prompt (%d from cache) · **%d** completion", u.PromptTokens, u.CacheHitTokens, u.CompletionTokens)
	if u.CacheReported() {
		fmt.Fprintf(&b, "\n\nprompt %s", u.CacheText())
	}
	if m.ss != nil {
		if p := m.ss.Model().Prices; p.Known() {
			fmt.Fprintf(&b, "\n\ncost: **$%.4f** (at the configured prices of %s)", p.Cost(u), m.ss.Model().Route())
		} else {
			b.WriteString("\n\ncost: unknown (no prices configured for this model: `prices:` in the llm-openai row)")
		}
	}
	return b.String()
}

// contextCommand is /context: the token meter's projection of the next
// request against the model's window.
func (m *Model) contextCommand() tea.Cmd {
	ss := m.ss
	if ss == nil {
		return nil
	}
	return func() tea.Msg {
		use, err := ss.ContextInUse(context.Background())
		if err != nil {
			return commandMsg{err: fmt.Errorf("context: %w", err)}
		}
		text := fmt.Sprintf("context in use: **%d** tokens", use.Tokens)
		if use.Window > 0 {
			text += fmt.Sprintf(" of %d (**%.1f%%**)", use.Window, 100*float64(use.Tokens)/float64(use.Window))
		}
		return commandMsg{text: text + " · source: " + use.Source}
	}
}

func (m *Model) toolsText() string {
	if m.ss == nil {
		return "no session"
	}
	var b strings.Builder
	b.WriteString("| tool | description |\n|---|---|\n")
	for _, t := range m.o.Agent.Tools().Tools(m.ss.Scope()) {
		d, _, _ := strings.Cut(strings.TrimSpace(t.Description()), "\n")
		fmt.Fprintf(&b, "| `%s` | %s |\n", t.Name(), strings.ReplaceAll(d, "|", "/"))
	}
	return b.String()
}

// permissionsText is /permissions: the permission mode and rules in force,
// this session's "always" grants, and the sandbox.
func (m *Model) permissionsText() string {
	var b strings.Builder
	if d, ok := describer(m.o.Root); ok {
		var scope *core.ScopeID
		if m.ss != nil {
			scope = m.ss.Scope()
		}
		in := d.InForce(scope)
		fmt.Fprintf(&b, "permission mode: **%s**\n\n", in.Mode)
		for _, l := range []struct {
			name  string
			rules []string
		}{{"deny", in.Deny}, {"ask", in.Ask}, {"allow", in.Allow}, {"allowed this session (\"always\" answers)", in.Granted}} {
			if len(l.rules) == 0 {
				continue
			}
			fmt.Fprintf(&b, "- **%s**: `%s`\n", l.name, strings.Join(l.rules, "`, `"))
		}
	} else {
		b.WriteString("no permission plugin is mounted: every call runs unless a hook or approval refuses it\n")
	}
	if s := sandboxText(m.o.Root); s != "" {
		b.WriteString("\nsandbox: " + s)
	}
	return b.String()
}

func describer(c *core.Context) (permission.Describer, bool) {
	rp, ok := core.Lookup(c, tools.ReadPolicyKey)
	if !ok || rp == nil {
		return nil, false
	}
	d, ok := rp.(permission.Describer)
	return d, ok
}

// sandboxText says how bash runs: "workspace-write, network off, bwrap: full".
func sandboxText(c *core.Context) string {
	rt, ok := core.Lookup(c, subprocess.Key)
	if !ok || rt == nil {
		return ""
	}
	return describeSandbox(rt.Sandbox())
}

// describeSandbox renders policy pol and what enforces it (rep): "off"
// when it is off, the policy without network or backend when no backend
// works (nothing enforces it: sandboxed commands fail to start), else
// "workspace-write, network off, bwrap: full".
func describeSandbox(pol subprocess.SandboxPolicy, rep subprocess.SandboxReport) string {
	if !pol.Enabled() {
		return "off (commands run unsandboxed)"
	}
	if rep.Enforcement == subprocess.EnforcementNone {
		return fmt.Sprintf("%s required, but no backend works here: sandboxed commands fail to start", pol.Mode)
	}
	net := "network " + pol.Network.String()
	return fmt.Sprintf("%s, %s, %s: %s", pol.Mode, net, rep.Backend, rep.Enforcement)
}

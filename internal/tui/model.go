package tui

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/commands"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/tools"
)

// Options configure the UI.
type Options struct {
	// Agent opens the sessions (required).
	Agent *agent.Service
	// Root is the harness's root context: the UI provides its approval
	// answerer there and looks up the commands, subprocess and permission
	// services (required).
	Root *core.Context
	// Session are the options of every session the UI opens (route,
	// thinking, max steps; ID resumes a stored session first). The UI sets
	// Observer and Cwd.
	Session agent.Options
	// Cwd is the working directory (history, @path completion, sessions).
	Cwd string
	// StateDir holds the prompt history (StateDir/history/*.jsonl); ""
	// keeps the history in memory.
	StateDir string
	// LogPath is where slog writes while the UI runs (shown by /help).
	LogPath string
	// NoColor drops colours (the NO_COLOR convention).
	NoColor bool
}

// Messages the program receives besides keys and sizes.
type (
	eventMsg    agent.Event
	turnDoneMsg struct {
		res *agent.Result
		err error
	}
	sessionMsg struct {
		ss   *agent.Session
		err  error
		note string
	}
	tickMsg    time.Time
	commandMsg struct {
		text, prompt string
		rewound      bool   // the session's conversation changed: render it again
		draft        string // put in the editor
		err          error
	}
)

// turnState is the running turn.
type turnState struct {
	cancel  context.CancelFunc
	started time.Time
}

// Model is the UI's Bubble Tea model. Use it through a pointer; Bind
// connects it to its program.
type Model struct {
	o    Options
	send func(tea.Msg)

	mu     sync.Mutex
	screen string // the last frame, without styles (for tests)

	w, h     int
	th       theme
	tr       *transcript
	input    textarea.Model
	hist     *history
	cmds     *commands.Registry
	files    *fileIndex
	comp     completion
	search   *searchState
	modal    *approvalModal
	picker   *picker
	scroll   int
	quitAt   time.Time // Ctrl+C was pressed once at this time
	escAt    time.Time // Esc was pressed once, with nothing to interrupt or close, at this time
	quitting bool
	answerer *answerer

	ss        *agent.Session
	opening   bool
	turn      *turnState
	lastTurn  time.Duration
	step      int
	ctxTokens int64
	total     llm.Usage
	budget    *agent.BudgetInfo // the last budget event: the status bar's warning
	cards     map[string]*toolCard
	reasoning *item
	assistant *item

	permStr, sandboxStr string // status bar parts, read when a session opens
	startMode           string // the permission mode at the first Shift+Tab (modes.go)
}

// New returns the model for o. It opens no session until it runs.
func New(o Options) *Model {
	m := &Model{o: o, w: 80, h: 24, cards: map[string]*toolCard{}}
	m.th = newTheme(true, o.NoColor)
	m.tr = newTranscript(m.th)
	m.input = newEditor(m.th)
	m.hist = loadHistory("")
	if o.StateDir != "" {
		m.hist = loadHistory(historyPath(o.StateDir, o.Cwd))
	}
	m.files = &fileIndex{root: o.Cwd}
	if r, ok := core.Lookup(o.Root, commands.Key); ok && r != nil {
		m.cmds = r
	} else {
		m.cmds = commands.NewRegistry()
		for _, c := range commands.Standard(m.cmds) {
			_ = m.cmds.Register(nil, c)
		}
	}
	m.refreshEnv()
	m.layout()
	return m
}

// refreshEnv reads the permission mode and the sandbox for the status bar.
func (m *Model) refreshEnv() {
	m.permStr, m.sandboxStr = permissionMode(m.o.Root, m.scope()), sandboxShort(m.o.Root)
}

// scope is the open session's scope (nil: none yet).
func (m *Model) scope() *core.ScopeID {
	if m.ss == nil {
		return nil
	}
	return m.ss.Scope()
}

// newEditor is the input editor: Enter sends (handled by the model),
// Shift+Enter, Ctrl+J and Alt+Enter insert a newline.
func newEditor(th theme) textarea.Model {
	ta := textarea.New()
	ta.Prompt = "│ "
	ta.Placeholder = "Ask anything · / for commands · @ for files · Ctrl+J newline"
	ta.ShowLineNumbers = false
	ta.CharLimit = 0
	ta.MaxHeight = 0
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxContentHeight = 0
	ta.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("shift+enter", "ctrl+j", "alt+enter"))
	st := textarea.DefaultStyles(th.dark)
	st.Focused.CursorLine = st.Focused.CursorLine.UnsetBackground()
	st.Cursor.Blink = false // no timer redrawing the screen twice a second
	ta.SetStyles(st)
	ta.Focus()
	return ta
}

// Bind connects m to its program's Send and provides the approval
// answerer; release withdraws the answerer and closes the session.
func (m *Model) Bind(send func(tea.Msg)) (release func(context.Context) error, err error) {
	m.mu.Lock()
	m.send = send
	m.mu.Unlock()
	m.answerer = &answerer{send: send}
	f := m.o.Root.Plugin(answererPlugin(m.answerer), nil)
	if err := f.Await(context.Background()); err != nil {
		return nil, fmt.Errorf("tui: providing the approval answerer: %w", err)
	}
	return func(ctx context.Context) error {
		err := f.Dispose(ctx)
		if m.turn != nil {
			m.turn.cancel()
		}
		if ss := m.session(); ss != nil {
			if cerr := ss.Close(ctx); err == nil {
				err = cerr
			}
		}
		return err
	}, nil
}

// post sends msg to the program (dropped before Bind).
func (m *Model) post(msg tea.Msg) {
	m.mu.Lock()
	send := m.send
	m.mu.Unlock()
	if send != nil {
		send(msg)
	}
}

func (m *Model) session() *agent.Session {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ss
}

// Screen returns the last frame the model drew, without styles.
func (m *Model) Screen() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.screen
}

// Init opens the first session and asks for the terminal background.
func (m *Model) Init() tea.Cmd {
	return tea.Batch(m.openSession(m.o.Session.ID, "", ""), tea.RequestBackgroundColor)
}

// openSession closes the current session (if any) and opens another: id
// "" starts a new one; route "" keeps the configured model.
func (m *Model) openSession(id, route, note string) tea.Cmd {
	old := m.ss
	m.opening = true
	o := m.o.Session
	o.ID, o.Cwd = id, m.o.Cwd
	if route != "" {
		o.Model = route
	} else if old != nil && id != "" {
		o.Model = old.Model().Route()
	}
	o.Observer = func(e agent.Event) { m.post(eventMsg(e)) }
	return func() tea.Msg {
		ctx := context.Background()
		if old != nil {
			_ = old.Close(ctx)
		}
		ss, err := m.o.Agent.Open(ctx, o)
		return sessionMsg{ss: ss, err: err, note: note}
	}
}

// layout sizes the editor for the terminal width.
func (m *Model) layout() {
	m.input.SetWidth(m.w)
	m.input.MaxHeight = max(3, m.h/3)
}

// Update handles one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = max(msg.Width, 20), max(msg.Height, 8)
		m.layout()
		return m, nil
	case tea.BackgroundColorMsg:
		if dark := msg.IsDark(); dark != m.th.dark {
			m.th = newTheme(dark, m.o.NoColor)
			m.tr.setTheme(m.th)
			st := textarea.DefaultStyles(dark)
			st.Focused.CursorLine = st.Focused.CursorLine.UnsetBackground()
			st.Cursor.Blink = false
			m.input.SetStyles(st)
		}
		return m, nil
	case eventMsg:
		m.onEvent(agent.Event(msg))
		return m, nil
	case sessionMsg:
		return m, m.onSession(msg)
	case turnDoneMsg:
		m.onTurnDone(msg)
		return m, nil
	case tickMsg:
		if m.turn != nil {
			return m, tick()
		}
		return m, nil
	case commandMsg:
		return m, m.onCommandDone(msg)
	case sessionListMsg:
		m.onSessionList(msg)
		return m, nil
	case approvalMsg:
		msg.card = m.cards[msg.req.CallID]
		m.modal = newApprovalModal(msg, m.modal)
		return m, nil
	case approvalGoneMsg:
		if m.modal != nil {
			m.modal = m.modal.drop(msg.id)
		}
		return m, nil
	case tea.PasteMsg:
		if m.modal != nil {
			return m, m.modal.paste(msg.Content)
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		m.updateCompletion()
		return m, cmd
	case tea.KeyPressMsg:
		return m, m.onKey(msg)
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return m, cmd
}

func tick() tea.Cmd {
	return tea.Tick(250*time.Millisecond, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// onKey handles a key press: global keys first, then the modal, the
// picker, the search, the completion menu, then the editor.
func (m *Model) onKey(k tea.KeyPressMsg) tea.Cmd {
	if k.String() == "ctrl+c" {
		return m.ctrlC()
	}
	m.quitAt = time.Time{}
	if k.String() != "esc" {
		m.escAt = time.Time{}
	}
	switch {
	case m.modal != nil:
		return m.approvalKey(k)
	case m.picker != nil:
		return m.pickerKey(k)
	case m.search != nil:
		return m.searchKey(k)
	}
	switch k.String() {
	case "esc":
		switch {
		case m.comp.active():
			m.comp = completion{}
		case m.turn != nil:
			m.turn.cancel()
			m.tr.add(&item{kind: kindNotice, text: "interrupting…", done: true})
		default:
			return m.escAgain()
		}
		return nil
	case "enter":
		if m.comp.active() {
			if run := m.acceptCompletion(); !run {
				return nil
			}
		}
		return m.submit()
	case "tab":
		if m.comp.active() {
			m.acceptCompletion()
		}
		return nil
	case "up":
		if m.comp.active() {
			m.comp.move(-1)
			return nil
		}
		if m.input.Line() == 0 {
			if s, ok := m.hist.prev(m.input.Value()); ok {
				m.input.SetValue(s)
				m.input.MoveToBegin()
			}
			return nil
		}
	case "down":
		if m.comp.active() {
			m.comp.move(1)
			return nil
		}
		if m.input.Line() == m.input.LineCount()-1 {
			if s, ok := m.hist.next(); ok {
				m.input.SetValue(s)
			}
			return nil
		}
	case "pgup", "shift+up":
		m.scroll += max(1, m.transcriptHeight()-2)
		return nil
	case "pgdown", "shift+down":
		m.scroll = max(0, m.scroll-max(1, m.transcriptHeight()-2))
		return nil
	case "ctrl+o":
		m.tr.thinking = !m.tr.thinking
		return nil
	case "shift+tab":
		m.cycleMode()
		return nil
	case "ctrl+r":
		m.search = &searchState{match: -1}
		return nil
	case "ctrl+u":
		m.killBeforeCursor()
		m.updateCompletion()
		return nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	m.updateCompletion()
	return cmd
}

// escAgain is Esc with nothing to interrupt or close: a second one within
// a second, in an empty editor, is Claude Code's rewind key. It lists the
// session's checkpoints (/rewind, when the checkpoint row registered it)
// and leaves "/rewind " in the editor for the number to go back to.
func (m *Model) escAgain() tea.Cmd {
	if m.input.Value() != "" {
		m.escAt = time.Time{}
		return nil
	}
	if m.escAt.IsZero() || time.Since(m.escAt) > time.Second {
		m.escAt = time.Now()
		return nil
	}
	m.escAt = time.Time{}
	if c, ok := m.cmds.Lookup("rewind"); !ok || c.Run == nil {
		m.tr.add(&item{kind: kindNotice, text: "no checkpoints to rewind to: the checkpoint row is not mounted", done: true})
		return nil
	}
	m.input.SetValue("/rewind ")
	return m.runCommand("rewind", "")
}

// killBeforeCursor is Ctrl+U: it deletes the whole input before the cursor,
// every line of it, as a shell's Ctrl+U clears a one-line command (with the
// cursor at the end, the input is cleared).
func (m *Model) killBeforeCursor() {
	lines := strings.Split(m.input.Value(), "\n")
	row := min(max(m.input.Line(), 0), len(lines)-1)
	cur := []rune(lines[row])
	col := min(max(m.input.Column(), 0), len(cur))
	rest := append([]string{string(cur[col:])}, lines[row+1:]...)
	m.input.SetValue(strings.Join(rest, "\n"))
	m.input.MoveToBegin()
}

// ctrlC: the first press clears the input, closes a modal (no) or
// interrupts the turn, and arms; a second press within 3 s quits.
func (m *Model) ctrlC() tea.Cmd {
	if !m.quitAt.IsZero() && time.Since(m.quitAt) < 3*time.Second {
		return m.quit()
	}
	m.quitAt = time.Now()
	switch {
	case m.modal != nil:
		m.modal.answerAll(approvalNo, "")
		m.modal = nil
	case m.input.Value() != "":
		m.input.Reset()
		m.comp = completion{}
	case m.turn != nil:
		m.turn.cancel()
	}
	return nil
}

func (m *Model) quit() tea.Cmd {
	m.quitting = true
	if m.turn != nil {
		m.turn.cancel()
	}
	return tea.Quit
}

// submit sends the editor's text: a slash command runs; otherwise a turn
// starts (refused while one runs).
func (m *Model) submit() tea.Cmd {
	text := m.input.Value()
	if strings.TrimSpace(text) == "" {
		return nil
	}
	if name, args, ok := commands.Parse(text); ok {
		if _, known := m.cmds.Lookup(name); known {
			_ = m.hist.add(text)
			m.input.Reset()
			m.comp = completion{}
			return m.runCommand(name, args)
		}
	}
	if m.turn != nil || m.ss == nil {
		m.tr.add(&item{kind: kindNotice, text: "a turn is running (Esc interrupts it); your text stays in the editor", done: true})
		return nil
	}
	if err := m.hist.add(text); err != nil {
		m.tr.add(&item{kind: kindError, text: err.Error(), done: true})
	}
	m.input.Reset()
	m.comp = completion{}
	return m.startTurn(text)
}

// startTurn runs one turn in a command; its events arrive as eventMsg and
// its end as turnDoneMsg.
func (m *Model) startTurn(prompt string) tea.Cmd {
	ctx, cancel := context.WithCancel(context.Background())
	m.turn = &turnState{cancel: cancel, started: time.Now()}
	m.scroll = 0
	ss := m.ss
	return tea.Batch(func() tea.Msg {
		defer cancel()
		res, err := ss.Run(ctx, prompt)
		return turnDoneMsg{res: res, err: err}
	}, tick())
}

func (m *Model) onSession(msg sessionMsg) tea.Cmd {
	m.opening = false
	if msg.err != nil {
		m.tr.add(&item{kind: kindError, text: "cannot open the session: " + msg.err.Error(), done: true})
		return nil
	}
	m.mu.Lock()
	m.ss = msg.ss
	m.mu.Unlock()
	m.step, m.ctxTokens, m.total = 0, 0, msg.ss.Usage()
	m.refreshEnv()
	if len(msg.ss.History()) > 0 {
		m.replay(msg.ss.History())
	}
	note := msg.note
	if note == "" {
		note = "session " + msg.ss.ID()
	}
	m.tr.add(&item{kind: kindNotice, text: note + " · " + msg.ss.Model().Route() + " · /help for commands", done: true})
	return nil
}

// replay shows a resumed session's conversation.
func (m *Model) replay(hist []llm.Message) {
	for _, msg := range hist {
		switch msg.Role {
		case llm.RoleUser:
			m.tr.add(&item{kind: kindUser, text: clean(msg.Content), done: true})
		case llm.RoleAssistant:
			if t := strings.TrimSpace(msg.Content); t != "" {
				m.tr.add(&item{kind: kindAssistant, text: clean(t), done: true})
			}
			for _, c := range msg.ToolCalls {
				card := newToolCard(c.ID, c.Name, c.Arguments, nil, m.o.Cwd, time.Now())
				card.state = toolDone
				m.tr.add(&item{kind: kindTool, tool: card, done: true})
			}
		}
	}
}

func (m *Model) onTurnDone(msg turnDoneMsg) {
	if m.turn != nil {
		m.lastTurn = time.Since(m.turn.started)
	}
	m.turn = nil
	m.closeLive()
	for _, c := range m.cards {
		if c.running() {
			c.update(tools.Presentation{Status: tools.StatusFailed, Meta: &tools.PresentationMeta{Reason: "interrupted"}})
			c.duration = time.Since(c.started)
		}
	}
	clear(m.cards)
	switch {
	case msg.err != nil && msg.res == nil:
		if ctxErr := context.Cause(context.Background()); ctxErr == nil && strings.Contains(msg.err.Error(), "context canceled") {
			m.tr.add(&item{kind: kindNotice, text: "interrupted · the session is kept", done: true})
		} else {
			m.tr.add(&item{kind: kindError, text: "error: " + msg.err.Error(), done: true})
		}
	}
}

// closeLive marks the streaming assistant and reasoning items done.
func (m *Model) closeLive() {
	for _, it := range []*item{m.assistant, m.reasoning} {
		if it != nil {
			it.done = true
			it.gen++
		}
	}
	m.assistant, m.reasoning = nil, nil
}

// onEvent applies one agent event to the transcript and the status.
func (m *Model) onEvent(e agent.Event) {
	if e.Depth > 0 {
		return // a subagent's event, relayed to its parent's observer: not part of this transcript
	}
	switch e.Type {
	case agent.EventUser:
		if e.Source == "" {
			m.tr.add(&item{kind: kindUser, text: clean(e.Text), done: true})
		}
	case agent.EventStep:
		m.step = e.Step
		m.closeLive()
	case agent.EventReasoning:
		if m.reasoning == nil {
			m.reasoning = m.tr.add(&item{kind: kindReasoning})
		}
		m.reasoning.appendText(clean(e.Text))
	case agent.EventText:
		if m.reasoning != nil {
			m.reasoning.done = true
			m.reasoning.gen++
			m.reasoning = nil
		}
		if m.assistant == nil {
			m.assistant = m.tr.add(&item{kind: kindAssistant})
		}
		m.assistant.appendText(clean(e.Text))
	case agent.EventAssistant:
		m.closeLive()
	case agent.EventToolCall:
		m.closeLive()
		c := newToolCard(e.ToolCall.ID, e.ToolCall.Name, e.ToolCall.Arguments, e.ToolCall.Presentation, m.o.Cwd, time.Now())
		m.cards[c.id] = c
		m.tr.add(&item{kind: kindTool, tool: c})
	case agent.EventToolProgress:
		if p := e.ToolProgress; p != nil {
			if c := m.cards[p.CallID]; c != nil && c.running() {
				c.live, c.liveBytes = p.Tail, p.Bytes // a running card is drawn anew every frame
			}
		}
	case agent.EventToolResult:
		m.onToolResult(e.ToolResult)
		// A call may have switched the session's permission mode (an
		// approved plan): the status bar reads it again.
		m.permStr = permissionMode(m.o.Root, m.scope())
	case agent.EventUsage:
		if e.ContextTokens > 0 {
			m.ctxTokens = e.ContextTokens
		}
		if e.Total != nil {
			m.total = *e.Total
		}
	case agent.EventNotice:
		m.tr.add(&item{kind: kindNotice, text: "note: " + clean(e.Text), done: true})
	case agent.EventBudget:
		if b := e.Budget; b != nil {
			m.budget = b
			m.tr.add(&item{kind: kindNotice, text: "note: " + b.Text, done: true})
		}
	case agent.EventCompaction:
		if c := e.Compaction; c != nil {
			m.tr.add(&item{kind: kindNotice, text: fmt.Sprintf("compacted (%s): %d messages summarized, %d kept; context %d → %d tokens", c.Trigger, c.Summarized, c.Kept, c.TokensBefore, c.TokensAfter), done: true})
			m.ctxTokens = int64(c.TokensAfter)
		}
	case agent.EventResult:
		m.closeLive()
		if r := e.Result; r != nil && r.IsError {
			if r.Reason == "aborted" {
				m.tr.add(&item{kind: kindNotice, text: "interrupted · the session is kept", done: true})
			} else {
				m.tr.add(&item{kind: kindError, text: fmt.Sprintf("turn ended (%s): %s", r.Reason, r.Error), done: true})
			}
		}
	}
}

func (m *Model) onToolResult(r *agent.ToolResultEvent) {
	c := m.cards[r.CallID]
	if c == nil {
		return
	}
	delete(m.cards, r.CallID)
	c.duration = time.Duration(r.DurationMs) * time.Millisecond
	p := r.Presentation
	if p == nil { // not from the agent loop: the generic presentation of the result
		o := &tools.Outcome{Content: []tools.Content{tools.Text(r.Content)}, IsError: r.IsError, Denied: r.Denied}
		g := tools.Present(nil, tools.PresentCall{ID: r.CallID, Name: r.Name, Outcome: o})
		p = &g
	}
	c.update(*p)
	for _, it := range m.tr.items {
		if it.tool == c {
			it.done = true
			it.gen++
		}
	}
}

// clean removes control characters except newlines and tabs from text
// from the model or a tool, so it cannot move the cursor or recolour the
// screen.
func clean(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || (r >= 0x80 && r < 0xa0) }) {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return '�'
		}
		return r
	}, s)
}

// transcriptHeight is the number of rows left for the transcript.
func (m *Model) transcriptHeight() int {
	return max(1, m.h-m.bottomHeight())
}

// bottom renders everything below the transcript: completion menu or
// search line, the modal or picker or editor, and the status bar.
func (m *Model) bottom() []string {
	var lines []string
	switch {
	case m.modal != nil:
		lines = append(lines, m.modal.view(m)...)
	case m.picker != nil:
		lines = append(lines, m.picker.view(m)...)
	default:
		lines = append(lines, m.comp.view(m)...)
		lines = append(lines, m.th.dim.Render(strings.Repeat("─", m.w)))
		if m.search != nil {
			lines = append(lines, m.search.view(m))
		} else {
			lines = append(lines, strings.Split(m.input.View(), "\n")...)
		}
	}
	return append(lines, m.statusLine())
}

func (m *Model) bottomHeight() int { return len(m.bottom()) }

// View draws the frame: the transcript window above the bottom part.
func (m *Model) View() tea.View {
	if m.quitting {
		return tea.NewView("")
	}
	bottom := m.bottom()
	th := max(1, m.h-len(bottom))
	lines, atTop := m.tr.window(m.w, th, m.scroll)
	if atTop && m.scroll > 0 && len(lines) < th {
		m.scroll = max(0, m.scroll-(th-len(lines)))
		lines, _ = m.tr.window(m.w, th, m.scroll)
	}
	var b strings.Builder
	for i := len(lines); i < th; i++ {
		b.WriteByte('\n')
	}
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString(strings.Join(bottom, "\n"))
	frame := b.String()
	m.mu.Lock()
	m.screen = ansi.Strip(frame)
	m.mu.Unlock()
	v := tea.NewView(frame)
	v.AltScreen = true
	v.WindowTitle = "harness"
	return v
}

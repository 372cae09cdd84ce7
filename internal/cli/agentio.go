package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/tools"
	"github.com/spf13/pflag"
)

// Output formats of `harness run`.
const (
	OutputText       = "text"
	OutputJSON       = "json"
	OutputStreamJSON = "stream-json"
)

// agentFlags are the session flags shared by `run` and `chat`.
type agentFlags struct {
	model          string
	thinking       bool
	noThinking     bool
	maxSteps       int
	maxStepsSet    bool // --max-steps was given (0 is then an error, not "default")
	cwd            string
	cont           bool
	session        string
	fork           string
	appendSystem   string
	yes            bool
	permMode       string   // --permission-mode
	allowedTools   []string // --allowed-tools
	reasoningLevel string
	compact        bool         // run --compact: compact the session before the turn
	errw           io.Writer    // where run --compact reports
	hideReasoning  bool         // --hide-reasoning
	boot           []BootOption // more boot options (job-run's confinement)
	// p is the text printer, when the output is text: bootAgent sends the
	// log lines through it and reports tool starts to its status line.
	p *printer
}

// register defines the shared flags on fl; maxStepsHelp says what one
// --max-steps budget covers (a prompt, a turn).
func (f *agentFlags) register(fl *pflag.FlagSet, maxStepsHelp string) {
	fl.StringVarP(&f.model, "model", "m", "", "model route provider/model (default: the agent's configured model)")
	fl.BoolVar(&f.thinking, "thinking", false, "enable the model's thinking mode")
	fl.BoolVar(&f.noThinking, "no-thinking", false, "disable the model's thinking mode")
	fl.StringVar(&f.reasoningLevel, "reasoning-effort", "", "reasoning effort for thinking models (e.g. high, max)")
	fl.IntVar(&f.maxSteps, "max-steps", 0, maxStepsHelp)
	fl.StringVar(&f.cwd, "cwd", "", "working directory of the session (default: the current directory)")
	fl.BoolVar(&f.cont, "continue", false, "continue the most recent session of the working directory")
	fl.StringVar(&f.session, "session", "", "resume the `ID` session (list them with harness sessions)")
	fl.StringVar(&f.fork, "fork", "", "continue from a copy of the `ID` session (a new session; ID stays as it is)")
	fl.StringVar(&f.appendSystem, "append-system-prompt", "", "text appended to the system prompt")
	fl.BoolVarP(&f.yes, "yes", "y", false, "approve every tool call a policy asks about (deny rules still apply)")
	fl.StringVar(&f.permMode, "permission-mode", "", "permission `MODE` for this session: default, acceptEdits, plan, bypass or dontAsk (sets the permission row's mode)")
	fl.BoolVar(&f.hideReasoning, "hide-reasoning", false, "do not print the model's reasoning (text output prints it on stderr, dimmed on a terminal)")
	fl.StringArrayVar(&f.allowedTools, "allowed-tools", nil, "allow `RULES` without asking, e.g. 'Bash(git diff *) Read' (separated by commas or spaces; appended to the permission row's allow list)")
}

func (f *agentFlags) options() (agent.Options, error) {
	o := agent.Options{Model: f.model, MaxSteps: f.maxSteps, AppendSystemPrompt: f.appendSystem, ReasoningEffort: f.reasoningLevel}
	switch {
	case f.thinking && f.noThinking:
		return o, errors.New("--thinking and --no-thinking are mutually exclusive")
	case f.thinking:
		o.Thinking = llm.ThinkingEnabled
	case f.noThinking:
		o.Thinking = llm.ThinkingDisabled
	}
	if f.maxSteps < 0 || f.maxStepsSet && f.maxSteps < 1 {
		return o, fmt.Errorf("--max-steps %d: must be at least 1", f.maxSteps)
	}
	if n := btoi(f.cont) + btoi(f.session != "") + btoi(f.fork != ""); n > 1 {
		return o, errors.New("--continue, --session and --fork are mutually exclusive")
	}
	if f.session != "" && !agent.ValidSessionID(f.session) {
		return o, fmt.Errorf("--session %q: not a session id (see `harness sessions`)", f.session)
	}
	if f.fork != "" && !agent.ValidSessionID(f.fork) {
		return o, fmt.Errorf("--fork %q: not a session id (see `harness sessions`)", f.fork)
	}
	if _, _, err := permissionFlags(f.permMode, f.allowedTools); err != nil {
		return o, err
	}
	return o, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// agentHost is a booted harness with its agent service.
type agentHost struct {
	h     *fxcore.Harness
	agent *agent.Service
	cwd   string       // the session's working directory (--cwd, else the process's)
	boot  []BootOption // what booted h, applied again to a reloaded manifest
}

// bootAgent boots the configured harness for the session's working
// directory and finds the agent service. Close it with stop. The process
// never changes directory: --cwd (made absolute) is where discovery looks
// for harness.yml, the session's cwd (tools resolve relative paths there),
// and the default `cwd` of the rows that take one (see withWorkdir); -c and
// --patch paths stay relative to where the command was typed.
func bootAgent(env *Env, f *agentFlags) (*agentHost, error) {
	host := &agentHost{}
	if f.cwd != "" {
		dir := f.cwd
		if !filepath.IsAbs(dir) {
			wd, err := env.Getwd()
			if err != nil {
				return nil, Failure(err)
			}
			dir = filepath.Join(wd, dir)
		}
		st, err := os.Stat(dir)
		if err == nil && !st.IsDir() {
			err = fmt.Errorf("%s: not a directory", dir)
		}
		if err != nil {
			return nil, UsageError(fmt.Errorf("--cwd: %w", err))
		}
		env.cwd = filepath.Clean(dir)
	}
	wd, err := env.workDir()
	if err != nil {
		return nil, Failure(err)
	}
	host.cwd = wd
	var opts []BootOption
	if p := f.p; p != nil && p.format == OutputText {
		p.hideReasoning = f.hideReasoning
		env.logw = p.logWriter()
		if p.tty {
			opts = append(opts, withToolStarts(p.toolStarted))
		}
	}
	if env.cwd != "" {
		opts = append(opts, withWorkdir(env.cwd, env.LookupEnv))
	}
	if f.yes {
		opts = append(opts, withApproveAll())
	}
	opts = append(opts, f.boot...)
	permRow := false
	mode, allow, err := permissionFlags(f.permMode, f.allowedTools)
	if err != nil {
		return nil, UsageError(err)
	}
	if mode != "" || len(allow) > 0 {
		opts = append(opts, withPermissions(mode, allow, &permRow))
	}
	h, err := env.Boot(opts...)
	if err != nil {
		return nil, err
	}
	if (mode != "" || len(allow) > 0) && !permRow {
		host.h = h
		_ = host.stop() // the usage error is what the user needs
		return nil, UsageError(errPermFlagsNeedRow)
	}
	host.h, host.boot = h, opts
	svc, ok := core.Lookup(h.Root.Context(), agent.Key)
	if !ok {
		_ = host.stop() // the usage error is what the user needs
		return nil, UsageError(errors.New("the agent plugin is not active: add a row `name: agent` to harness.yml (with llm, tools and systemprompt rows); `harness plugins` shows what it waits for"))
	}
	host.agent = svc
	return host, nil
}

// stop stops the harness, terminating every child process.
func (a *agentHost) stop() error {
	if a.h == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return a.h.Stop(ctx)
}

// open opens the session selected by the flags.
func (a *agentHost) open(ctx context.Context, f *agentFlags, o agent.Options) (*agent.Session, error) {
	wd := a.cwd
	o.Cwd = wd
	o.ID = f.session
	o.Fork = f.fork
	if f.cont {
		store := a.agent.Sessions()
		page, err := store.List(ctx, sessions.Query{Cwd: wd, Limit: 1})
		if err != nil {
			return nil, Failure(err)
		}
		if len(page.Sessions) == 0 {
			return nil, UsageError(fmt.Errorf("--continue: no session for %s in %s", wd, store.Location("")))
		}
		o.ID = page.Sessions[0].ID
	}
	ss, err := a.agent.Open(ctx, o)
	if err != nil {
		return nil, classify(err)
	}
	return ss, nil
}

// classify maps agent and model errors to exit codes: configuration and
// usage problems exit 2, a budget stop 4, everything else 1.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var xe *ExitError
	if errors.As(err, &xe) {
		return err
	}
	if errors.Is(err, llm.ErrMissingAPIKey) {
		return UsageError(fmt.Errorf("model: %w", err))
	}
	const routeHint = " (the model route comes from --model, else the agent row's `model:` in harness.yml; `harness plugins` lists the llm-openai rows)"
	if errors.Is(err, llm.ErrNoAdapter) {
		return UsageError(fmt.Errorf("%w%s", err, routeHint))
	}
	if errors.Is(err, agent.ErrBudget) {
		return &ExitError{Code: ExitBudget, Err: err}
	}
	if errors.Is(err, agent.ErrSessionNotFound) || errors.Is(err, agent.ErrSessionInUse) || errors.Is(err, agent.ErrToolsNotOffered) ||
		errors.Is(err, agent.ErrBudgetUnpriced) {
		return UsageError(err)
	}
	if le, ok := llm.AsError(err); ok {
		switch le.Code {
		case llm.CodeNoAdapter:
			return UsageError(fmt.Errorf("model: %w%s", err, routeHint))
		case llm.CodeUnsupportedOption:
			return UsageError(fmt.Errorf("model: %w", err))
		case llm.CodeAuth:
			return Failure(fmt.Errorf("model request failed: %w", err)) // the adapter names where the key came from
		}
		return Failure(fmt.Errorf("model request failed: %w", err))
	}
	return Failure(err)
}

// printer renders session events in one output format. Text: assistant
// text to stdout as it streams; reasoning, one compact line per tool call
// and result, and a summary line per turn to stderr; and, when stderr is a
// terminal, a status line kept as its last line (step, tokens, elapsed
// time, the running tool). stream-json: every event as one line on stdout,
// in the agent package's wire form (agent.StreamJSONEncoder). json:
// nothing until the end (see final).
type printer struct {
	format string
	out    io.Writer
	errw   io.Writer
	tty    bool      // stderr is a terminal: status line, dimmed reasoning
	outTTY bool      // stdout is a terminal (maybe the same one)
	start  time.Time // of the current turn (its first step)

	// hideReasoning drops reasoning deltas (--hide-reasoning).
	hideReasoning bool

	mu        sync.Mutex
	lastByte  byte
	wrote     bool
	reasoning bool // a reasoning block is being written to errw
	errLast   byte // the last byte of reasoning written to errw
	status    bool // a status line is displayed
	inTurn    bool // a step started and the turn's result has not come
	step      int
	tokens    int64
	running   []runningTool     // top-level calls whose body runs, in start order
	calls     map[string]string // top-level call id → tool name, until the result
	enc       *agent.StreamJSONEncoder
	args      map[string]json.RawMessage // top-level tool call arguments by call id, until the result
	denials   []permissionDenial         // top-level calls a permission decision refused
	failures  []toolFailure              // top-level calls that failed (denials included)
	stop      chan struct{}              // closed by close; nil when no ticker runs
	ticker    sync.WaitGroup
}

// runningTool is a top-level tool call whose body started.
type runningTool struct {
	id, name string
	start    time.Time
}

// Terminal styles of the text output (stderr on a terminal only).
const (
	sgrDim   = "\x1b[2m"
	sgrReset = "\x1b[0m"
)

func newPrinter(format string, out, errw io.Writer) *printer {
	p := &printer{format: format, out: out, errw: errw, tty: isTerminal(errw), outTTY: isTerminal(out), start: time.Now()}
	if format == OutputStreamJSON {
		p.enc = agent.NewStreamJSONEncoder(out)
	}
	if format == OutputText && p.tty {
		// Keep the status line's elapsed times live while a step runs.
		p.stop = make(chan struct{})
		p.ticker.Add(1)
		go func() {
			defer p.ticker.Done()
			t := time.NewTicker(250 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-p.stop:
					return
				case <-t.C:
					p.mu.Lock()
					if p.status {
						p.showStatus()
					}
					p.mu.Unlock()
				}
			}
		}()
	}
	return p
}

// close stops the status ticker and clears the status line.
func (p *printer) close() {
	if p.stop != nil {
		close(p.stop)
		p.ticker.Wait()
		p.stop = nil
	}
	p.mu.Lock()
	p.endReasoning()
	p.clearStatus()
	p.mu.Unlock()
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// logWriter is where the harness's slog lines go while the printer runs:
// stderr, with the status line taken away before each write and drawn
// again after it, so log lines (a retried model request) print above it.
func (p *printer) logWriter() io.Writer { return logWriter{p} }

type logWriter struct{ p *printer }

// Write writes b to the printer's stderr above the status line.
func (w logWriter) Write(b []byte) (int, error) {
	p := w.p
	p.mu.Lock()
	defer p.mu.Unlock()
	shown := p.status
	p.endReasoning()
	p.clearStatus()
	n, err := p.errw.Write(b)
	if shown {
		p.showStatus()
	}
	return n, err
}

// toolStarted marks a call's body as started (after any approval): the
// status line then shows it with its elapsed time.
func (p *printer) toolStarted(callID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	name, ok := p.calls[callID]
	if !ok || p.format != OutputText {
		return // a subagent's call, or not ours
	}
	p.running = append(p.running, runningTool{id: callID, name: name, start: time.Now()})
	p.showStatus()
}

// observe is the session observer.
func (p *printer) observe(e agent.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.noteDenial(e)
	p.noteCall(e)
	switch p.format {
	case OutputStreamJSON:
		_ = p.enc.Encode(e)
		return
	case OutputJSON:
		return
	}
	if e.Depth > 0 {
		p.subagent(e) // a subagent's event: one indented line per step, call and result
		return
	}
	if e.Type != agent.EventReasoning {
		p.endReasoning()
	}
	switch e.Type {
	case agent.EventStep:
		if !p.inTurn {
			p.inTurn, p.start = true, time.Now()
		}
		p.step = e.Step
		p.showStatus()
	case agent.EventReasoning:
		if p.hideReasoning || e.Text == "" {
			return
		}
		p.clearStatus()
		if !p.reasoning {
			p.endText()
			p.reasoning = true
		}
		if p.tty {
			_, _ = io.WriteString(p.errw, sgrDim+e.Text+sgrReset)
		} else {
			_, _ = io.WriteString(p.errw, e.Text)
		}
		p.errLast = e.Text[len(e.Text)-1]
	case agent.EventText:
		p.clearStatus()
		if e.Text != "" {
			_, _ = io.WriteString(p.out, e.Text)
			p.lastByte, p.wrote = e.Text[len(e.Text)-1], true
		}
	case agent.EventToolCall:
		p.endText()
		p.clearStatus()
		fmt.Fprintf(p.errw, "%s\n", callLine(e.ToolCall, 160))
		// No status line until the call's body starts (toolStarted): an
		// approval question may come first on the terminal.
	case agent.EventToolResult:
		p.clearStatus()
		if e.ToolResult.Denied {
			fmt.Fprintf(p.errw, "  %s\n", deniedLines(e.ToolResult))
		} else {
			fmt.Fprintf(p.errw, "  %s\n", resultLine(e.ToolResult, 200))
		}
		if plan := e.ToolResult.Presentation.Plan(); plan != nil {
			text := tools.FormatPlan(plan)
			if text == "" {
				text = "(empty)\n"
			}
			fmt.Fprintf(p.errw, "plan:\n%s", indent(text))
		}
		p.showStatus()
	case agent.EventUsage:
		if e.Total != nil {
			p.tokens = e.Total.TotalTokens
		}
	case agent.EventNotice:
		p.endText() // the notice starts on its own line when both streams are one
		p.clearStatus()
		fmt.Fprintf(p.errw, "harness: %s\n", e.Text)
	case agent.EventBudget:
		p.endText()
		p.clearStatus()
		fmt.Fprintf(p.errw, "harness: %s\n", e.Budget.Text)
	case agent.EventResult:
		p.clearStatus()
		p.endText()
		p.inTurn, p.running = false, nil
		if e.Result != nil && (e.Result.Steps > 0 || !e.Result.IsError) {
			// A turn that failed before any model call (no API key, an
			// unknown route) has nothing to sum up: its error says it all.
			fmt.Fprintf(p.errw, "%s\n", summary(e.Result))
		}
	}
}

// deniedLines is a refused call's result in full, never clipped: the
// denial says what to configure (the rule to add, the flag for one run),
// and a person needs all of it, indented under the "✗ name: denied" line.
func deniedLines(r *agent.ToolResultEvent) string {
	reason := strings.TrimSpace(strings.TrimPrefix(r.Content, "Error: "))
	if reason == "" {
		reason = finalPresentation(r).Reason()
	}
	return fmt.Sprintf("✗ %s: denied, %d ms\n    %s", r.Name, r.DurationMs, strings.ReplaceAll(reason, "\n", "\n    "))
}

// summary is the text output's last line of a turn: steps, tokens, the
// prompt cache's hit share (when the provider's cache served any), wall time and,
// when the route's prices are known, the cost in USD.
func summary(r *agent.Result) string {
	parts := []string{plural(r.Steps, "step"), fmt.Sprintf("%d tokens", r.Usage.TotalTokens)}
	if r.Usage.CacheHitTokens > 0 {
		parts = append(parts, fmt.Sprintf("cache %.0f%%", 100*r.Usage.CacheHitRatio()))
	}
	parts = append(parts, fmt.Sprintf("%.1fs", float64(r.DurationMs)/1000))
	if r.TotalCostUSD != nil {
		parts = append(parts, fmt.Sprintf("$%.4f", *r.TotalCostUSD))
	}
	if r.IsError {
		parts = append(parts, r.Reason)
	}
	return "[" + strings.Join(parts, " · ") + "]"
}

// noteCall tracks the top-level session's calls between their call and
// result events, for the status line.
func (p *printer) noteCall(e agent.Event) {
	if e.Depth > 0 {
		return
	}
	switch {
	case e.Type == agent.EventToolCall && e.ToolCall != nil:
		if p.calls == nil {
			p.calls = map[string]string{}
		}
		p.calls[e.ToolCall.ID] = e.ToolCall.Name
	case e.Type == agent.EventToolResult && e.ToolResult != nil:
		delete(p.calls, e.ToolResult.CallID)
		p.running = slices.DeleteFunc(p.running, func(r runningTool) bool { return r.id == e.ToolResult.CallID })
	}
}

// endText terminates streamed assistant text with a newline.
func (p *printer) endText() {
	if p.wrote && p.lastByte != '\n' {
		_, _ = io.WriteString(p.out, "\n")
		p.lastByte = '\n'
	}
}

// endReasoning terminates a reasoning block with a newline.
func (p *printer) endReasoning() {
	if p.reasoning {
		if p.errLast != '\n' {
			_, _ = io.WriteString(p.errw, "\n")
		}
		p.reasoning = false
	}
}

// showStatus draws the status line (a terminal only) in place:
// [step N · T tokens · S s · TOOL S s (+K)].
func (p *printer) showStatus() {
	if !p.tty || p.reasoning || p.outTTY && p.wrote && p.lastByte != '\n' {
		return // not in the middle of a line on the terminal
	}
	line := fmt.Sprintf("[step %d · %d tokens · %.1fs", p.step, p.tokens, time.Since(p.start).Seconds())
	if len(p.running) > 0 {
		r := p.running[0]
		line += fmt.Sprintf(" · %s %.1fs", r.name, time.Since(r.start).Seconds())
		if n := len(p.running) - 1; n > 0 {
			line += fmt.Sprintf(" (+%d)", n)
		}
	}
	fmt.Fprintf(p.errw, "\r\x1b[2K%s%s]%s", sgrDim, line, sgrReset)
	p.status = true
}

func (p *printer) clearStatus() {
	if p.status {
		_, _ = io.WriteString(p.errw, "\r\x1b[2K")
		p.status = false
	}
}

// permissionDenial is one refused call in the json result, as Claude
// Code's permission_denials: the tool, its call id and its input.
type permissionDenial struct {
	ToolName  string          `json:"tool_name"`
	ToolUseID string          `json:"tool_use_id"`
	ToolInput json.RawMessage `json:"tool_input"`
}

// noteDenial remembers the top-level session's refused calls.
func (p *printer) noteDenial(e agent.Event) {
	if e.Depth > 0 {
		return
	}
	switch {
	case e.Type == agent.EventToolCall && e.ToolCall != nil:
		if p.args == nil {
			p.args = map[string]json.RawMessage{}
		}
		in := json.RawMessage(e.ToolCall.Arguments)
		if !json.Valid(in) {
			in, _ = json.Marshal(e.ToolCall.Arguments) // keep invalid arguments as a string
		}
		p.args[e.ToolCall.ID] = in
	case e.Type == agent.EventToolResult && e.ToolResult != nil:
		r := e.ToolResult
		if fp := finalPresentation(r); fp.Status == tools.StatusFailed {
			p.failures = append(p.failures, toolFailure{ToolName: r.Name, ToolUseID: r.CallID, Reason: fp.Reason()})
		}
		in, ok := p.args[r.CallID]
		delete(p.args, r.CallID)
		if !r.Denied {
			return
		}
		if !ok {
			in = json.RawMessage("{}")
		}
		p.denials = append(p.denials, permissionDenial{ToolName: r.Name, ToolUseID: r.CallID, ToolInput: in})
	}
}

// denied reports how many top-level calls were refused.
func (p *printer) denied() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.denials)
}

// final writes the json output's one object: the agent's Result with
// permissionDenials and toolFailures (always present, [] when none) added.
// plan writes the plan a turn ended on (reason "plan") to stdout, after
// what the model wrote, in text mode; json and stream-json carry it as
// the result's text.
func (p *printer) plan(text string) {
	if p.format != OutputText {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.wrote {
		sep := "\n"
		if p.lastByte != '\n' {
			sep = "\n\n"
		}
		_, _ = io.WriteString(p.out, sep)
	}
	_, _ = io.WriteString(p.out, strings.TrimRight(text, "\n")+"\n")
}

func (p *printer) final(r *agent.Result) {
	if p.format != OutputJSON || r == nil {
		return
	}
	b, err := json.Marshal(r)
	if err != nil || len(b) < 2 || b[len(b)-1] != '}' {
		return
	}
	d := p.denials
	if d == nil {
		d = []permissionDenial{}
	}
	f := p.failures
	if f == nil {
		f = []toolFailure{}
	}
	extra, _ := json.Marshal(struct {
		PermissionDenials []permissionDenial `json:"permissionDenials"`
		ToolFailures      []toolFailure      `json:"toolFailures"`
	}{d, f})
	var out bytes.Buffer
	out.Write(b[:len(b)-1])
	if len(b) > 2 {
		out.WriteByte(',')
	}
	out.Write(extra[1:])
	var v bytes.Buffer
	_ = json.Compact(&v, out.Bytes())
	enc := json.NewEncoder(p.out)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(json.RawMessage(v.Bytes()))
}

// indent prefixes every line of s with two spaces.
func indent(s string) string {
	var b strings.Builder
	for l := range strings.Lines(s) {
		b.WriteString("  ")
		b.WriteString(l)
	}
	return b.String()
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// lineCount counts the lines of text: "ok\n" and "ok" are one line each,
// "" is none.
func lineCount(text string) int {
	n := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		n++
	}
	return n
}

// plural renders "1 line", "2 lines", "0 lines".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

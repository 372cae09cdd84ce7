package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/agent/lifecycle"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/subagent"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/tools"
)

// Plugin is the hooks plugin.
var Plugin = core.Define("hooks", apply,
	core.WithInject(subprocess.Key.Name()),
	core.WithDescription("Claude Code compatible command hooks: PreToolUse, PostToolUse, PermissionRequest, Notification, SessionStart, UserPromptSubmit, Stop, PreCompact, SubagentStart, SubagentStop, SessionEnd."))

func apply(c *core.Context, cfg Config) error {
	h, err := newRunner(cfg, subprocessRunnerWith(core.Use(c, subprocess.Key), cfg.Sandbox), c.Logger())
	if err != nil {
		return err
	}
	h.approver = func() (tools.Approver, bool) { return core.Lookup(c, tools.ApprovalKey) }
	h.modeOf = func(scope *core.ScopeID) string {
		if rp, ok := core.Lookup(c, tools.ReadPolicyKey); ok {
			if mr, ok := rp.(tools.ModeReporter); ok {
				return mr.PermissionMode(scope)
			}
		}
		return ""
	}
	if len(h.events[EventPreToolUse]) > 0 {
		if err := tools.OnPreExecute(c, h.preToolUse); err != nil {
			return err
		}
	}
	if len(h.events[EventPostToolUse]) > 0 {
		if err := core.On(c, tools.PostExecute, h.postToolUse); err != nil {
			return err
		}
	}
	// The lifecycle events are always heard, to learn each session's
	// transcript path for the tool events of that session.
	if err := core.On(c, lifecycle.SessionStart, h.sessionStart); err != nil {
		return err
	}
	if err := core.On(c, lifecycle.UserPromptSubmit, h.userPromptSubmit); err != nil {
		return err
	}
	if err := core.On(c, lifecycle.Stop, h.stop); err != nil {
		return err
	}
	if err := core.On(c, lifecycle.PreCompact, h.preCompact); err != nil {
		return err
	}
	if len(h.events[EventPermissionRequest])+len(h.events[EventNotification]) > 0 {
		if err := core.On(c, tools.PermissionRequest, h.permissionRequest); err != nil {
			return err
		}
	}
	if len(h.events[EventSessionEnd]) > 0 {
		if err := core.On(c, lifecycle.SessionEnd, h.sessionEnd); err != nil {
			return err
		}
	}
	if len(h.events[EventSubagentStart]) > 0 {
		if err := core.On(c, subagent.Started, h.subagentStart); err != nil {
			return err
		}
	}
	if len(h.events[EventSubagentStop]) > 0 {
		if err := core.On(c, subagent.Settled, h.subagentStop); err != nil {
			return err
		}
	}
	h.notify = func(scope *core.ScopeID, n lifecycle.Notice) {
		lifecycle.SystemMessage.Emit(context.Background(), c.To(scope), n)
	}
	return c.Effect("hooks transcripts", func() (func(), error) {
		return h.removeFallback, nil
	})
}

// compiledGroup is a matcher group ready to run.
type compiledGroup struct {
	matcher matcher
	hooks   []CommandHook
}

// runner holds the compiled configuration of one active hooks plugin.
type runner struct {
	events         map[string][]compiledGroup
	cwd            string
	sessionID      string
	toolNames      map[string]string
	harnessNames   bool
	permissionMode string
	run            runFunc
	log            *slog.Logger
	approver       func() (tools.Approver, bool)         // the approval service, looked up per call
	modeOf         func(*core.ScopeID) string            // the permission plugin's mode ("" without one)
	notify         func(*core.ScopeID, lifecycle.Notice) // shows a systemMessage; nil: logged only

	mu          sync.Mutex
	transcripts map[string]string // session id → its Claude-format transcript, learned from lifecycle events
	fallbackDir string            // private directory of empty transcripts for calls outside a session
	warned      map[string]bool   // "hook\x00field" pairs already warned about
	envFiles    int               // CLAUDE_ENV_FILE files made so far (for unique names)
}

func newRunner(cfg Config, run runFunc, log *slog.Logger) (*runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cwd := cfg.Cwd
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("cwd: %w", err)
		}
		cwd = wd
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return nil, fmt.Errorf("cwd: %w", err)
	}
	mode := cfg.PermissionMode
	if mode == "" {
		mode = "default"
	}
	// A call outside any session (`harness tool`) still has a session_id,
	// as every Claude Code hook input does: one minted for this runner.
	sessionID := cfg.SessionID
	if sessionID == "" {
		sessionID = sessions.NewID(time.Now())
	}
	h := &runner{events: map[string][]compiledGroup{}, cwd: abs, sessionID: sessionID, toolNames: cfg.ToolNames,
		harnessNames: cfg.HarnessToolNames, permissionMode: mode, run: run, log: log,
		transcripts: map[string]string{}, warned: map[string]bool{}}
	for _, ev := range cfg.Hooks.all() {
		for _, g := range ev.groups {
			m, _ := compileMatcher(g.Matcher) // validated above
			h.events[ev.name] = append(h.events[ev.name], compiledGroup{matcher: m, hooks: g.Hooks})
		}
	}
	return h, nil
}

// selected returns the hooks of event whose matcher selects one of
// subjects, each distinct command once, in configuration order.
func (h *runner) selected(event string, subjects ...string) []CommandHook {
	var out []CommandHook
	seen := map[string]bool{}
	for _, g := range h.events[event] {
		if !slices.ContainsFunc(subjects, g.matcher.match) {
			continue
		}
		for _, hk := range g.hooks {
			if !seen[hk.Command] {
				seen[hk.Command] = true
				out = append(out, hk)
			}
		}
	}
	return out
}

// dispatch runs every selected hook in parallel with the payload on stdin and
// returns their outcomes in configuration order. The goroutines are joined
// before it returns.
func (h *runner) dispatch(ctx context.Context, scope *core.ScopeID, selected []CommandHook, p Payload, extraEnv ...string) []outcome {
	if len(selected) == 0 {
		return nil
	}
	if p.Cwd == "" {
		p.Cwd = h.cwd
	}
	if p.SessionID == "" {
		p.SessionID = h.sessionID
	}
	if p.TranscriptPath == "" {
		p.TranscriptPath = h.transcriptOf(p.SessionID)
	}
	p.PermissionMode = h.mode(scope)
	stdin, err := encodePayload(p)
	if err != nil {
		outs := make([]outcome, len(selected))
		for i, hk := range selected {
			outs[i] = failed(outcome{hook: hk.label()}, fmt.Sprintf("could not encode the event: %v", err))
		}
		return outs
	}
	env := map[string]string{
		"CLAUDE_PROJECT_DIR":  p.Cwd,
		"HARNESS_PROJECT_DIR": p.Cwd,
		"HARNESS_HOOK_EVENT":  p.HookEventName,
	}
	for i := 0; i+1 < len(extraEnv); i += 2 {
		env[extraEnv[i]] = extraEnv[i+1]
	}
	outs := make([]outcome, len(selected))
	var wg sync.WaitGroup
	for i, hk := range selected {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					outs[i] = failed(outcome{hook: hk.label()}, fmt.Sprintf("panicked: %v", r))
				}
			}()
			start := time.Now()
			r := h.run(ctx, hk.Command, stdin, p.Cwd, env, hk.timeout())
			outs[i] = decode(p.HookEventName, hk.label(), seconds(hk.timeout()), r)
			outs[i].failOpen = hk.FailOpen
			h.log.Debug("hook ran", "event", p.HookEventName, "hook", hk.label(), "exit", r.exitCode,
				"signal", r.signal, "timedOut", r.timedOut, "duration", time.Since(start))
		}()
	}
	wg.Wait()
	return outs
}

// mode is the permission_mode hooks are told for a call in scope: the mode
// the permission plugin enforces, else the configured permissionMode.
func (h *runner) mode(scope *core.ScopeID) string {
	if h.modeOf != nil {
		if m := h.modeOf(scope); m != "" {
			return m
		}
	}
	return h.permissionMode
}

// seconds renders a timeout the way hooks configure it: "60s", "0.5s".
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// report logs failures and non-blocking errors of one event.
func (h *runner) report(event string, m merged) {
	for _, f := range m.failures {
		h.log.Warn("hook failed", "event", event, "error", f)
	}
	for _, w := range m.warnings {
		h.log.Warn("hook error (non-blocking)", "event", event, "error", w)
	}
}

// encodePayload renders the event JSON on one line (compact, no HTML
// escaping) followed by a newline, as Claude Code does.
func encodePayload(p Payload) ([]byte, error) {
	if len(p.ToolInput) > 0 {
		var b bytes.Buffer
		if err := json.Compact(&b, p.ToolInput); err != nil {
			return nil, fmt.Errorf("tool_input: %w", err)
		}
		p.ToolInput = b.Bytes()
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// toolName is the tool_name hooks read for the harness tool name: a
// toolNames entry, else Claude Code's name (lifecycle.ClaudeToolName) unless
// harnessToolNames is set.
func (h *runner) toolName(name string) string {
	if n, ok := h.toolNames[name]; ok && n != "" {
		return n
	}
	if h.harnessNames {
		return name
	}
	return lifecycle.ClaudeToolName(name)
}

// toolHooks returns the hooks of a tool event whose matcher selects the
// tool by its harness name, its Claude Code name or the name hooks are told.
func (h *runner) toolHooks(event, name string) []CommandHook {
	return h.selected(event, name, lifecycle.ClaudeToolName(name), h.toolName(name))
}

// sessionPrefix is how the agent labels a session's scope ("session:<id>").
const sessionPrefix = "session:"

// sessionOf names the session of a tool call: the session id of the
// nearest scope labelled "session:<id>" (the agent's), the same id its
// lifecycle events carry; else the scope's label; "" without a scope.
func sessionOf(scope *core.ScopeID) string {
	for s := scope; s != nil; s = s.Parent() {
		if id, ok := strings.CutPrefix(s.Label(), sessionPrefix); ok {
			return id
		}
	}
	if scope == nil {
		return ""
	}
	return scope.Label()
}

// learn records a session's transcript path from a lifecycle event.
func (h *runner) learn(s lifecycle.Session) {
	if s.ID == "" || s.TranscriptPath == "" {
		return
	}
	h.mu.Lock()
	h.transcripts[s.ID] = s.TranscriptPath
	h.mu.Unlock()
}

// unsafeName matches what may not appear in a file name made from a session id.
var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

// transcriptOf returns the transcript path of session id: the one its
// lifecycle events named, else an empty transcript file in a private
// directory of this plugin (a call outside an agent session, such as
// `harness tool`), so transcript_path is always a readable file. "" only
// when that file cannot be made.
func (h *runner) transcriptOf(id string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if p, ok := h.transcripts[id]; ok {
		return p
	}
	if h.fallbackDir == "" {
		dir, err := os.MkdirTemp("", "harness-hooks-")
		if err != nil {
			h.log.Warn("hooks: no transcript directory", "err", err)
			return ""
		}
		h.fallbackDir = dir
	}
	name := unsafeName.ReplaceAllString(id, "_")
	if name == "" || strings.Trim(name, ".") == "" {
		name = "session"
	}
	p := filepath.Join(h.fallbackDir, name+".jsonl")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		h.log.Warn("hooks: no transcript file", "err", err)
		return ""
	}
	_ = f.Close()
	h.transcripts[id] = p
	return p
}

// removeFallback deletes the private transcript directory, if any.
func (h *runner) removeFallback() {
	h.mu.Lock()
	dir := h.fallbackDir
	h.fallbackDir = ""
	h.mu.Unlock()
	if dir != "" {
		_ = os.RemoveAll(dir)
	}
}

// claudeArgNames maps, per harness tool, the arguments Claude Code's tool
// names otherwise to Claude's name: bash's timeoutMs is Bash's timeout
// (milliseconds both), grep's include is Grep's glob, bash_output's
// shell_id is BashOutput's bash_id.
var claudeArgNames = map[string]map[string]string{"bash": {"timeoutMs": "timeout"}, "grep": {"include": "glob"}, "bash_output": {"shell_id": "bash_id"}}

// toolInput is the tool_input hooks read: the call's arguments, with a
// relative file_path made absolute against the working directory (Claude
// Code sends absolute paths) and, unless harnessToolNames is set, the
// arguments Claude Code names otherwise by Claude's names (claudeArgNames).
func (h *runner) toolInput(tool, args string) json.RawMessage {
	renames := claudeArgNames[tool]
	if h.harnessNames {
		renames = nil
	}
	if !strings.Contains(args, `"file_path"`) && renames == nil {
		return json.RawMessage(args)
	}
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &m) != nil || m == nil {
		return json.RawMessage(args)
	}
	changed := false
	var fp string
	if json.Unmarshal(m["file_path"], &fp) == nil && fp != "" && !filepath.IsAbs(fp) {
		m["file_path"], _ = json.Marshal(filepath.Join(h.cwd, fp))
		changed = true
	}
	for from, to := range renames {
		if v, ok := m[from]; ok {
			if _, taken := m[to]; !taken {
				delete(m, from)
				m[to] = v
				changed = true
			}
		}
	}
	if !changed {
		return json.RawMessage(args)
	}
	out, err := json.Marshal(m)
	if err != nil {
		return json.RawMessage(args)
	}
	return out
}

// harnessArgName is the harness's name of argument name of tool in a
// hook's updatedInput: Claude's name (claudeArgNames) maps back.
func (h *runner) harnessArgName(tool, name string) string {
	if h.harnessNames {
		return name
	}
	for from, to := range claudeArgNames[tool] {
		if to == name {
			return from
		}
	}
	return name
}

// warnOnce logs, once per hook and field, that a hook's output had a field
// the harness parsed but does not act on for that event.
func (h *runner) warnOnce(event string, outs []outcome) {
	for _, o := range outs {
		for _, f := range o.ignored {
			key := o.hook + "\x00" + event + "\x00" + f
			h.mu.Lock()
			seen := h.warned[key]
			h.warned[key] = true
			h.mu.Unlock()
			if !seen {
				h.log.Warn("hook output field is not honoured for this event; ignored", "hook", o.hook, "event", event, "field", f)
			}
		}
	}
}

// show passes the hooks' systemMessages to the user.
func (h *runner) show(event string, scope *core.ScopeID, outs []outcome) {
	for _, o := range outs {
		if o.systemMessage == "" {
			continue
		}
		h.log.Info("hook systemMessage", "event", event, "hook", o.hook, "message", o.systemMessage)
		if h.notify != nil {
			h.notify(scope, lifecycle.Notice{Source: "hooks:" + event, Text: o.systemMessage})
		}
	}
}

// preToolUse is the PreToolUse vote: the hooks' merged answer, failing
// closed. A hook's allow is an approval (tools.Decision.Approve): it lifts
// the permission mode's ask, as in Claude Code, but no ask or deny a rule,
// a guard or another vote makes. A hook's updatedInput becomes the vote's
// Arguments: the registry validates it and runs the votes and guards again
// on it, and this vote then answers Allow without running the hooks again
// (their first answer stands).
func (h *runner) preToolUse(ctx context.Context, e *tools.Execution) (tools.Decision, error) {
	if e.Rechecking() {
		return tools.Allow(), nil
	}
	sel := h.toolHooks(EventPreToolUse, e.Name())
	if len(sel) == 0 {
		return tools.Allow(), nil
	}
	outs := h.dispatch(ctx, e.Scope(), sel, Payload{
		SessionID: sessionOf(e.Scope()), HookEventName: EventPreToolUse,
		ToolName: h.toolName(e.Name()), ToolInput: h.toolInput(e.Name(), e.Arguments()), ToolUseID: e.CallID(),
	})
	m := merge(outs, true)
	h.report(EventPreToolUse, m)
	h.show(EventPreToolUse, e.Scope(), outs)
	h.warnOnce(EventPreToolUse, outs)
	switch m.verdict {
	case verdictDeny:
		return tools.Deny(m.reason), nil
	case verdictAsk:
		reason := m.reason
		if reason == "" {
			reason = fmt.Sprintf("a PreToolUse hook asks for approval of tool %q", e.Name())
		}
		why := h.unanswerable(e.Scope())
		if h.mode(e.Scope()) == "dontAsk" {
			why = "the permission mode is dontAsk: what would be asked is denied"
		}
		if why != "" {
			return tools.Deny(fmt.Sprintf("%s; approval is required, but %s. The tool %q was not run; "+
				"to let such calls run, change the PreToolUse hook that asks, or allow them in the permission rules of harness.yml.",
				reason, why, e.Name())), nil
		}
		d := tools.Ask(reason)
		d.Arguments = h.updatedArguments(e, m.updatedInput)
		return d, nil
	}
	return tools.Decision{Approve: m.verdict == verdictAllow, Arguments: h.updatedArguments(e, m.updatedInput)}, nil
}

// updatedArguments is the argument JSON a hook's updatedInput asks for:
// its top-level fields replace the call's (the fields a hook leaves out
// keep the model's values, so a script that changes only the command works
// with the harness's own required fields). "" when there is no rewrite or
// it changes nothing; a value that is not a JSON object is passed on as
// is, for the registry to reject as invalid arguments.
func (h *runner) updatedArguments(e *tools.Execution, raw json.RawMessage) string {
	if raw == nil {
		return ""
	}
	var upd map[string]json.RawMessage
	if json.Unmarshal(raw, &upd) != nil || upd == nil {
		return string(raw)
	}
	var args map[string]json.RawMessage
	if json.Unmarshal([]byte(e.Arguments()), &args) != nil || args == nil {
		args = map[string]json.RawMessage{}
	}
	changed := false
	for k, v := range upd {
		k = h.harnessArgName(e.Name(), k)
		if old, ok := args[k]; !ok || !jsonEqual(old, v) {
			changed = true
		}
		args[k] = v
	}
	if !changed {
		return ""
	}
	out, err := json.Marshal(args)
	if err != nil {
		return string(raw)
	}
	return string(out)
}

// jsonEqual reports whether two JSON texts have the same compact form.
func jsonEqual(a, b json.RawMessage) bool {
	var x, y bytes.Buffer
	return json.Compact(&x, a) == nil && json.Compact(&y, b) == nil && x.String() == y.String()
}

// unanswerable is what the hooks plugin asks of an approval service: why can
// no one answer ("" when someone can)? approval.Service implements it.
type unanswerable interface{ Unanswerable() string }

// scopedUnanswerable is the same question for the asks of one session scope.
type scopedUnanswerable interface {
	UnanswerableIn(scope *core.ScopeID) string
}

// unanswerable says why nobody can answer an ask made in scope, or "" when
// someone can.
func (h *runner) unanswerable(scope *core.ScopeID) string {
	if h.approver == nil {
		return ""
	}
	a, ok := h.approver()
	if !ok {
		return "no approval service is mounted (add the approval plugin to harness.yml)"
	}
	if u, ok := a.(scopedUnanswerable); ok {
		return u.UnanswerableIn(scope)
	}
	if u, ok := a.(unanswerable); ok {
		return u.Unanswerable()
	}
	return ""
}

// postToolUse runs the PostToolUse hooks over the result as the rest of the
// chain leaves it: a block turns the result into the hook's feedback, a
// replacement becomes the result's content, contexts are appended. Failures
// are logged; the result stands.
func (h *runner) postToolUse(ctx context.Context, e *tools.Execution, next core.Next[*tools.Execution, tools.PostDecision]) (tools.PostDecision, error) {
	d, err := next(ctx, e)
	if err != nil {
		return d, err
	}
	if !e.BodyStarted() {
		return d, nil // the tool never ran (denied, cancelled, invalid, unknown): no PostToolUse, as in Claude Code
	}
	sel := h.toolHooks(EventPostToolUse, e.Name())
	if len(sel) == 0 {
		return d, nil
	}
	outs := h.dispatch(ctx, e.Scope(), sel, Payload{
		SessionID: sessionOf(e.Scope()), HookEventName: EventPostToolUse,
		ToolName: h.toolName(e.Name()), ToolInput: h.toolInput(e.Name(), e.Arguments()), ToolUseID: e.CallID(),
		ToolResponse: h.responseOf(e.Name(), json.RawMessage(e.Arguments()), e.Outcome(), d),
	})
	m := merge(outs, false)
	h.report(EventPostToolUse, m)
	h.show(EventPostToolUse, e.Scope(), outs)
	h.warnOnce(EventPostToolUse, outs)
	if m.halt {
		e.ConcludeTurn() // continue: false — the turn ends after this step's results
	}
	switch {
	case m.verdict == verdictDeny:
		out := tools.Block(tools.Text(m.reason))
		if d.Kind == tools.PostBlock {
			out.Feedback = append(append([]tools.Content(nil), d.Feedback...), out.Feedback...)
		}
		out.AdditionalContexts = d.AdditionalContexts
		return out.WithContexts(m.contexts...), nil
	case m.replace != nil && d.Kind == tools.PostAccept:
		if d.ReplaceValue {
			h.log.Warn("PostToolUse hook output replaces a value replacement made by another listener", "tool", e.Name())
		}
		out := tools.ReplaceContent(tools.Text(*m.replace))
		out.AdditionalContexts = d.AdditionalContexts
		return out.WithContexts(m.contexts...), nil
	}
	return d.WithContexts(m.contexts...), nil
}

// responseOf is the tool_response a PostToolUse hook sees, with the
// content as the rest of the chain leaves it. For the tools Claude Code
// has (bash, read, write, edit, grep, glob) it is Claude Code's shape
// (Bash: stdout, stderr, interrupted, isImage; Write and Edit: filePath,
// structuredPatch, …; see claudeResponse) with the harness's content and
// isError, unless harnessToolNames is set or a listener replaced the
// value; for any other tool, and for a call whose tool failed before it
// had a value, {content, isError, value}.
func (h *runner) responseOf(tool string, args json.RawMessage, o *tools.Outcome, d tools.PostDecision) json.RawMessage {
	r := ToolResponse{}
	var value json.RawMessage
	if o != nil {
		content := o.Content
		switch {
		case d.Kind == tools.PostBlock:
			content = d.Feedback
		case d.Content != nil:
			content = d.Content
		}
		r = ToolResponse{Content: tools.TextOf(content), IsError: o.IsError || d.Kind == tools.PostBlock}
		if o.Value != nil && !d.ReplaceValue {
			if b, err := json.Marshal(o.Value); err == nil {
				value = b
			}
		}
	}
	if value != nil && !h.harnessNames {
		if b, ok := claudeResponse(tool, args, value, r.Content, r.IsError, h.cwd); ok {
			return b
		}
	}
	if !r.IsError {
		r.Value = value
	}
	b, err := json.Marshal(r)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}

// lifecycleDecision runs the hooks of a lifecycle event and folds them into
// a lifecycle.Decision. Plain stdout of SessionStart and UserPromptSubmit
// hooks is context, as in Claude Code.
func (h *runner) lifecycleDecision(ctx context.Context, event, subject string, s lifecycle.Session, p Payload) lifecycle.Decision {
	h.learn(s)
	sel := h.selected(event, subject)
	if len(sel) == 0 {
		return lifecycle.Decision{}
	}
	var extra []string
	envFile := ""
	if event == EventSessionStart {
		var err error
		if envFile, err = h.newEnvFile(p.SessionID); err != nil {
			h.log.Warn("hooks: no CLAUDE_ENV_FILE for SessionStart", "err", err)
		} else {
			extra = []string{"CLAUDE_ENV_FILE", envFile}
		}
	}
	outs := h.dispatch(ctx, s.Scope, sel, p, extra...)
	m := merge(outs, false)
	h.report(event, m)
	h.show(event, s.Scope, outs)
	h.warnOnce(event, outs)
	d := lifecycle.Decision{AdditionalContext: m.contexts, Halt: m.halt, HaltReason: m.haltReason}
	if event == EventSessionStart || event == EventUserPromptSubmit {
		d.AdditionalContext = nil
		for _, o := range outs {
			switch {
			case o.context != "":
				d.AdditionalContext = append(d.AdditionalContext, o.context)
			case o.plain != "":
				d.AdditionalContext = append(d.AdditionalContext, o.plain)
			}
		}
	}
	if m.verdict == verdictDeny {
		d.Block, d.Reason = true, m.reason
	}
	if envFile != "" {
		d.Env = h.readEnvFile(ctx, envFile)
	}
	return d
}

func payloadSession(s lifecycle.Session, event string) Payload {
	return Payload{SessionID: s.ID, Cwd: s.Cwd, TranscriptPath: s.TranscriptPath, HookEventName: event}
}

func (h *runner) sessionStart(ctx context.Context, p lifecycle.Start, next core.Next[lifecycle.Start, lifecycle.Decision]) (lifecycle.Decision, error) {
	pl := payloadSession(p.Session, EventSessionStart)
	pl.Source = p.Source
	mine := h.lifecycleDecision(ctx, EventSessionStart, p.Source, p.Session, pl)
	mine.Block, mine.Reason = false, "" // SessionStart cannot block
	rest, err := next(ctx, p)
	return mine.Merge(rest), err
}

func (h *runner) userPromptSubmit(ctx context.Context, p lifecycle.Prompt, next core.Next[lifecycle.Prompt, lifecycle.Decision]) (lifecycle.Decision, error) {
	pl := payloadSession(p.Session, EventUserPromptSubmit)
	pl.Prompt = p.Prompt
	mine := h.lifecycleDecision(ctx, EventUserPromptSubmit, "", p.Session, pl)
	if mine.Block {
		return mine, nil // the prompt is rejected; nothing downstream needs to see it
	}
	rest, err := next(ctx, p)
	return mine.Merge(rest), err
}

func (h *runner) preCompact(ctx context.Context, p lifecycle.Compacting, next core.Next[lifecycle.Compacting, lifecycle.Decision]) (lifecycle.Decision, error) {
	pl := payloadSession(p.Session, EventPreCompact)
	instr := p.CustomInstructions
	pl.Trigger, pl.CustomInstructions = p.Trigger, &instr
	mine := h.lifecycleDecision(ctx, EventPreCompact, p.Trigger, p.Session, pl)
	mine.AdditionalContext = nil
	rest, err := next(ctx, p)
	return mine.Merge(rest), err
}

func (h *runner) stop(ctx context.Context, p lifecycle.Stopping, next core.Next[lifecycle.Stopping, lifecycle.Decision]) (lifecycle.Decision, error) {
	pl := payloadSession(p.Session, EventStop)
	active, last := p.StopHookActive, p.LastAssistantMessage
	pl.StopHookActive, pl.LastAssistantMessage = &active, &last
	mine := h.lifecycleDecision(ctx, EventStop, "", p.Session, pl)
	rest, err := next(ctx, p)
	return mine.Merge(rest), err
}

// permissionRequest runs the PermissionRequest hooks when a call needs
// approval: a deny (exit 2, or decision.behavior "deny") rejects the call
// without asking; an allow grants it only when the ask is the permission
// mode's alone (a rule's ask still goes to a person, as a PreToolUse allow
// would not lift it either). When nothing decided and a person will be
// asked, the Notification hooks run (notification_type permission_prompt).
func (h *runner) permissionRequest(ctx context.Context, a tools.PermissionAsk, next core.Next[tools.PermissionAsk, tools.PermissionVerdict]) (tools.PermissionVerdict, error) {
	rest, err := next(ctx, a)
	if err != nil || rest.Deny {
		return rest, err
	}
	req := a.Request
	if sel := h.toolHooks(EventPermissionRequest, req.Tool); len(sel) > 0 {
		outs := h.dispatch(ctx, req.Scope, sel, Payload{
			SessionID: sessionOf(req.Scope), HookEventName: EventPermissionRequest,
			ToolName: h.toolName(req.Tool), ToolInput: h.toolInput(req.Tool, req.Arguments),
		})
		m := merge(outs, false)
		h.report(EventPermissionRequest, m)
		h.show(EventPermissionRequest, req.Scope, outs)
		h.warnOnce(EventPermissionRequest, outs)
		switch {
		case m.verdict == verdictDeny:
			return tools.PermissionVerdict{Deny: true, Reason: fmt.Sprintf("a PermissionRequest hook denied tool %q: %s", req.Tool, m.reason)}, nil
		case m.verdict == verdictAllow && a.Soft:
			return tools.PermissionVerdict{Allow: true}, nil
		case m.verdict == verdictAllow:
			h.log.Warn("hooks: a PermissionRequest hook's allow is not honoured for an ask a permission rule made; a person is asked",
				"tool", req.Tool)
		}
	}
	if rest.Allow && a.Soft {
		return rest, nil
	}
	if sel := h.selected(EventNotification, notificationPermission); len(sel) > 0 && h.unanswerable(req.Scope) == "" {
		outs := h.dispatch(ctx, req.Scope, sel, Payload{
			SessionID: sessionOf(req.Scope), HookEventName: EventNotification,
			Message: "Harness needs your permission to use " + h.toolName(req.Tool), NotificationType: notificationPermission,
		})
		h.report(EventNotification, merge(outs, false))
		h.warnOnce(EventNotification, outs)
	}
	return rest, nil
}

// notificationPermission is the notification_type of an approval prompt.
const notificationPermission = "permission_prompt"

// sessionEndReason is the SessionEnd reason the harness reports: it does
// not tell a /clear or a logout from any other close.
const sessionEndReason = "other"

// sessionEnd runs the SessionEnd hooks when a session closes. They run even
// when the close's context is cancelled (an interrupted run), each bounded
// by its timeout; their answers decide nothing.
func (h *runner) sessionEnd(ctx context.Context, e lifecycle.End) error {
	h.learn(e.Session)
	sel := h.selected(EventSessionEnd, sessionEndReason)
	if len(sel) == 0 {
		return nil
	}
	pl := payloadSession(e.Session, EventSessionEnd)
	pl.Reason = sessionEndReason
	outs := h.dispatch(context.WithoutCancel(ctx), e.Session.Scope, sel, pl)
	h.report(EventSessionEnd, merge(outs, false))
	h.warnOnce(EventSessionEnd, outs)
	return nil
}

// subagentPayload is the payload of a subagent event, in the parent's session.
func (h *runner) subagentPayload(event string, info subagent.Info) Payload {
	return Payload{SessionID: info.Parent, HookEventName: event, AgentID: info.ID, AgentType: info.Agent}
}

// subagentStart runs the SubagentStart hooks when a subagent was created.
func (h *runner) subagentStart(ctx context.Context, info subagent.Info) error {
	sel := h.selected(EventSubagentStart, info.Agent)
	if len(sel) == 0 {
		return nil
	}
	outs := h.dispatch(ctx, nil, sel, h.subagentPayload(EventSubagentStart, info))
	h.report(EventSubagentStart, merge(outs, false))
	h.warnOnce(EventSubagentStart, outs)
	return nil
}

// subagentStop runs the SubagentStop hooks when a subagent's turn settled.
func (h *runner) subagentStop(ctx context.Context, s subagent.Settlement) error {
	sel := h.selected(EventSubagentStop, s.Info.Agent)
	if len(sel) == 0 {
		return nil
	}
	p := h.subagentPayload(EventSubagentStop, s.Info)
	h.mu.Lock()
	p.AgentTranscriptPath = h.transcripts[s.Info.ID]
	h.mu.Unlock()
	active, last := false, s.Outcome.Text
	p.StopHookActive, p.LastAssistantMessage = &active, &last
	outs := h.dispatch(ctx, nil, sel, p)
	h.report(EventSubagentStop, merge(outs, false))
	h.warnOnce(EventSubagentStop, outs)
	return nil
}

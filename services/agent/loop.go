package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/compaction"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/sessions/sessionstate"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tokenmeter"
	"github.com/dshgo/harness/services/tools"
	"github.com/dshgo/harness/services/tools/workdir"
)

// Run runs one user turn: the prompt, then steps until the model stops,
// MaxSteps is reached, or ctx is cancelled (dsh C11). Each step assembles
// and renders the system prompt for the session scope, sends the history
// and the assembled tools, streams the reply, and runs its tool calls
// through the tools Scheduler (policy and results in model order,
// parallel-safe bodies overlapped). Everything is logged as it happens.
//
// The turn's records are held in memory until its first model call got
// past the route's up-front checks: when that call fails at once with a
// configuration error (a missing API key, an unknown route, an option the
// model cannot honour; see [IsConfigError]) the turn is dropped, nothing
// is logged (a new session's file is not even created) and the history is
// as before the turn. Any other outcome, a failed request included (HTTP
// error, network error, a cut stream, cancellation), keeps the records,
// so the prompt can be resumed.
//
// The returned Result is never nil. The error is nil when the model
// finished; otherwise it is ErrMaxSteps, ErrBudget (the next model call
// would have passed a cap of the session's [Budget]; it was not sent),
// ErrPromptBlocked, the model's
// *llm.Error, a prompt assembly or rendering error, a log write error, or
// ctx's error (the stream was stopped, running tools were cancelled and
// aborted results were recorded).
func (ss *Session) Run(ctx context.Context, prompt string) (*Result, error) {
	return ss.runTurn(ctx, prompt, false)
}

// Continue resumes the session's last turn without a new prompt: a turn
// that was cut short (the process died or was stopped while the model
// streamed or tools ran) goes on from its stored history. Tool calls that
// have a stored result are not run again; calls cut off before their
// result read as interrupted (see [Replay]) and the model decides whether
// to make them again. Steps count from zero against MaxSteps. Results and
// errors are those of [Session.Run]; UserPromptSubmit hooks do not run.
func (ss *Session) Continue(ctx context.Context) (*Result, error) {
	return ss.runTurn(ctx, "", true)
}

// runTurn is Run (resume false) or Continue (resume true).
func (ss *Session) runTurn(ctx context.Context, prompt string, resume bool) (*Result, error) {
	ss.turnMu.Lock()
	if ss.running {
		ss.turnMu.Unlock()
		return &Result{SessionID: ss.id, IsError: true, Error: ErrBusy.Error(), Reason: "error"}, ErrBusy
	}
	ss.running = true
	ss.turnMu.Unlock()
	defer func() { ss.turnMu.Lock(); ss.running = false; ss.turnMu.Unlock() }()

	t := &turn{ss: ss, start: time.Now(), res: &Result{SessionID: ss.id}, resume: resume}
	ss.mu.Lock()
	if !resume || ss.turn == 0 {
		ss.turn++
	}
	t.n = ss.turn
	before := savedState{history: len(ss.history), pending: ss.pending, snapshot: ss.lastSnapshot, interrupted: ss.interrupted}
	ss.mu.Unlock()
	ss.hold()
	err := t.run(ctx, prompt)
	if t.refused {
		ss.drop()
		ss.mu.Lock()
		ss.history = ss.history[:before.history]
		delete(ss.turnStart, t.n)
		ss.pending, ss.lastSnapshot, ss.turn = before.pending, before.snapshot, t.n-1
		ss.interrupted = before.interrupted
		ss.mu.Unlock()
	} else if werr := ss.release(); werr != nil && err == nil {
		err = werr
	}
	return t.finish(err)
}

// savedState is what a dropped turn restores.
type savedState struct {
	history     int
	pending     []sourced
	snapshot    string
	interrupted []llm.Message
}

// IsConfigError reports whether err is a configuration error that a model
// call reports before sending anything: a missing API key, a route that
// does not resolve, an option the model cannot honour. A turn whose first
// model call fails with one leaves no record (see [Session.Run]).
func IsConfigError(err error) bool {
	if errors.Is(err, llm.ErrMissingAPIKey) || errors.Is(err, llm.ErrNoAdapter) {
		return true
	}
	le, ok := llm.AsError(err)
	return ok && (le.Code == llm.CodeNoAdapter || le.Code == llm.CodeUnsupportedOption)
}

// turn is the state of one Run.
type turn struct {
	ss    *Session
	n     int
	step  int
	start time.Time
	res   *Result
	// gated: the first model call got past the up-front checks and the
	// held records were written. refused: it failed them (see Run).
	gated, refused bool
	// autoStep is the step that last compacted automatically (once per
	// step); lengthRetried: a CONTEXT_LENGTH error was answered by one
	// compaction and a retry this turn.
	autoStep      int
	lengthRetried bool
	// resume: Continue, no prompt of its own.
	resume bool
	// unsent: the budget stopped the last step before its model call.
	unsent bool
	// conclusion is what a tool that concluded the last step said of the
	// turn's end (tools.Execution.ConcludeTurnAs), nil when none did.
	conclusion *tools.Conclusion
	// children sums the usage of subagents started by the turn's tools
	// (added concurrently by their tool bodies; see AddChildUsage).
	childMu  sync.Mutex
	children *llm.Usage
}

func (t *turn) run(ctx context.Context, prompt string) error {
	if err := t.begin(ctx, prompt); err != nil {
		return err
	}
	return t.loop(ctx)
}

// begin records the prompt (after UserPromptSubmit hooks) and the pending
// SessionStart contexts; a resumed turn records only the contexts.
func (t *turn) begin(ctx context.Context, prompt string) error {
	ss := t.ss
	ss.mu.Lock()
	interrupted := ss.interrupted
	ss.interrupted = nil
	ss.mu.Unlock()
	// The results the model is given for calls a dead process left
	// running are stored first (they are in the history already).
	for i := range interrupted {
		m := &interrupted[i]
		rec := Record{Type: RecordToolResult, Turn: t.n, Message: m, CallID: m.ToolCallID, Name: m.Name, IsError: true,
			Content: []tools.Content{tools.Text(m.Content)},
			Error:   &tools.ErrorInfo{Name: "ToolError", Code: "INTERRUPTED", Reason: "the process running the call ended before its result"}}
		if err := ss.write(rec); err != nil {
			return err
		}
	}
	if t.resume {
		ss.mu.Lock()
		pending := ss.pending
		ss.pending = nil
		ss.mu.Unlock()
		for _, p := range pending {
			if err := t.user(p.text, p.source); err != nil {
				return err
			}
		}
		return nil
	}
	blocked, reason, added := ss.promptSubmit(ctx, prompt, t.n)
	if blocked {
		if reason == "" {
			reason = "a UserPromptSubmit hook rejected it"
		}
		return fmt.Errorf("%w: %s", ErrPromptBlocked, reason)
	}
	// SessionStart contexts wait for the first accepted prompt.
	ss.mu.Lock()
	pending := append(ss.pending, added...)
	ss.pending = nil
	ss.mu.Unlock()
	if err := t.user(prompt, ""); err != nil {
		return err
	}
	for _, p := range pending {
		if err := t.user(p.text, p.source); err != nil {
			return err
		}
	}
	return nil
}

// loop makes steps until the model stops (and no Stop hook continues),
// MaxSteps is reached, or ctx is done.
func (t *turn) loop(ctx context.Context) error {
	ss := t.ss
	stopActive := false
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if t.step >= ss.opts.MaxSteps {
			return fmt.Errorf("%w: %d (raise it with --max-steps)", ErrMaxSteps, ss.opts.MaxSteps)
		}
		t.step++
		msg, done, err := t.doStep(ctx)
		if err != nil {
			return err
		}
		if !done {
			continue
		}
		t.res.Text = msg.Content
		if c := t.conclusion; c != nil && c.Text != "" {
			t.res.Text = c.Text
		}
		cont, reason, added := ss.stop(ctx, stopActive, msg.Content)
		for _, p := range added {
			if err := t.user(p.text, p.source); err != nil {
				return err
			}
		}
		if !cont {
			return nil
		}
		// A Stop listener keeps the turn going: how this step ended is not
		// how the turn ends.
		t.res.Reason, t.conclusion = "", nil
		stopActive = true
		if err := t.user(reason, SourceStop); err != nil {
			return err
		}
	}
}

// user appends a user message (source "" for the user's own prompt).
func (t *turn) user(text, source string) error {
	m := &llm.Message{Role: llm.RoleUser, Content: text}
	if err := t.ss.append(Record{Type: RecordUser, Turn: t.n, Step: t.step, Message: m, Source: source}); err != nil {
		return err
	}
	t.ss.observe(Event{Type: EventUser, Turn: t.n, Step: t.step, Text: text, Source: source})
	return nil
}

// doStep makes one model call and runs its tool calls. done is true when
// the turn is over (no tool calls, or a tool concluded the turn).
//
// The step's records from the reply on (usage, the assistant message,
// the tool calls; or the partial reply and the error) are written in one
// batch, before the first tool runs or the step returns.
func (t *turn) doStep(ctx context.Context) (msg llm.Message, done bool, err error) {
	ss := t.ss
	defer func() {
		if ferr := ss.flush(); ferr != nil && err == nil {
			err = ferr
		}
	}()
	ss.observe(Event{Type: EventStep, Turn: t.n, Step: t.step})
	req, err := t.request(ctx)
	if err != nil {
		return msg, false, err
	}
	if !ss.budget.caps.IsZero() {
		tokens, _ := ss.project(req)
		if err := t.checkBudget(max(tokens, 1)); err != nil {
			t.unsent = true
			return msg, false, t.budgetStop(err)
		}
	}
	var werr error
	asm := llm.Assembler{MaxArgumentBytes: ss.svc.cfg.maxToolArgBytes(), MaxTextBytes: ss.svc.cfg.maxReplyBytes()}
	for c := range ss.svc.llm.Stream(ctx, req) {
		if !t.gated {
			// The first chunk of the turn tells whether the route's
			// up-front checks passed: keep the held records, or drop them.
			t.gated = true
			if c.Kind == llm.ChunkFinish && c.Err != nil && IsConfigError(c.Err) {
				t.refused = true
			} else if werr = ss.release(); werr != nil {
				break // stops the request
			}
		}
		asm.Add(c)
		switch c.Kind {
		case llm.ChunkText:
			ss.observe(Event{Type: EventText, Turn: t.n, Step: t.step, Text: c.Text})
		case llm.ChunkReasoning:
			ss.observe(Event{Type: EventReasoning, Turn: t.n, Step: t.step, Text: c.Text})
		}
		if ctx.Err() != nil {
			// Stop at the cancellation rather than fold what the
			// transport had already buffered: the aborted message logged
			// below is then what the observer was shown.
			break
		}
	}
	if werr != nil {
		return msg, false, werr
	}
	ss.gather()
	resp := asm.Response()
	t.usage(req, resp)
	msg = resp.Message
	switch resp.Finish {
	case llm.FinishAborted, llm.FinishError:
		if resp.Finish == llm.FinishAborted || ctx.Err() != nil {
			if msg.Content != "" || msg.Reasoning != "" {
				partial := llm.Message{Role: llm.RoleAssistant, Content: msg.Content, Reasoning: msg.Reasoning}
				_ = ss.append(Record{Type: RecordAssistant, Turn: t.n, Step: t.step, Message: &partial, Aborted: true})
			}
			if err := ctx.Err(); err != nil {
				return msg, false, err
			}
			return msg, false, context.Canceled
		}
		if isContextLength(resp.Err) && !t.lengthRetried {
			// The request did not fit: compact once and retry the step.
			t.lengthRetried = true
			if _, err := ss.compact(ctx, "auto", "", true); err == nil {
				ss.observe(Event{Type: EventNotice, Turn: t.n, Step: t.step, Text: "the request exceeded the context window: the history was compacted and the step is retried"})
				return t.doStep(ctx)
			}
		}
		return msg, false, t.failed(msg, resp.Err)
	}
	if err := ss.append(Record{Type: RecordAssistant, Turn: t.n, Step: t.step, Message: &msg}); err != nil {
		return msg, false, err
	}
	ss.observe(Event{Type: EventAssistant, Turn: t.n, Step: t.step, Message: &msg})
	if len(msg.ToolCalls) == 0 {
		if resp.Finish == llm.FinishLength {
			t.res.Reason = "length"
			ss.observe(Event{Type: EventNotice, Turn: t.n, Step: t.step, Text: "the reply was cut by the model's output token limit"})
		}
		return msg, true, nil
	}
	t.conclusion = nil
	concluded, err := t.runTools(ctx, msg.ToolCalls)
	if err != nil {
		return msg, false, err
	}
	if err := ctx.Err(); err != nil {
		return msg, false, err
	}
	if concluded {
		t.res.Reason = "concluded"
		if t.conclusion != nil && t.conclusion.Reason != "" {
			t.res.Reason = t.conclusion.Reason
		}
		return msg, true, nil
	}
	return msg, false, nil
}

// failed records a model call that failed (not cancelled): the partial
// reply as an aborted assistant message, or, when nothing was streamed, a
// short assistant note saying the request failed, so the history never
// holds two user messages in a row (strict providers reject that); then
// the error itself as a RecordError. It returns err.
func (t *turn) failed(msg llm.Message, err *llm.Error) error {
	if err == nil {
		return errors.New("the model call failed without an error")
	}
	if !t.gated || t.refused {
		return err
	}
	ss := t.ss
	partial := llm.Message{Role: llm.RoleAssistant, Content: msg.Content, Reasoning: msg.Reasoning}
	if partial.Content == "" {
		partial.Content = "[no reply: the model request failed: " + err.Error() + "]"
	}
	if werr := ss.append(Record{Type: RecordAssistant, Turn: t.n, Step: t.step, Message: &partial, Aborted: true}); werr != nil {
		return errors.Join(err, werr)
	}
	if werr := ss.write(Record{Type: RecordError, Turn: t.n, Step: t.step, Code: string(err.Code), Failure: err.Error()}); werr != nil {
		return errors.Join(err, werr)
	}
	return err
}

// request assembles and renders the system prompt for the session scope,
// projects a changed runtime-context snapshot into the history (C10) and
// builds the model request.
func (t *turn) request(ctx context.Context) (llm.Request, error) {
	ss := t.ss
	for _, n := range ss.takeInbox() {
		if err := t.user(n.text, n.source); err != nil {
			return llm.Request{}, err
		}
	}
	req, snapshot, live, err := ss.build(ctx)
	if err != nil {
		return llm.Request{}, err
	}
	if err := t.reconcilePrefix(live, &req); err != nil {
		return llm.Request{}, err
	}
	ss.mu.Lock()
	last := ss.lastSnapshot
	ss.mu.Unlock()
	if snapshot != last {
		text := snapshot
		if text == "" {
			text = systemprompt.ContextSnapshotCleared
		}
		if err := t.user(text, SourceRuntimeContext); err != nil {
			return llm.Request{}, err
		}
		ss.mu.Lock()
		ss.lastSnapshot = snapshot
		ss.mu.Unlock()
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: text})
	}
	// Compact first when the request would pass the threshold of the
	// context window (once per step).
	if comp, ok := core.Lookup(ss.svc.c, compaction.Key); ok && t.autoStep != t.step {
		if tokens, _ := ss.project(req); comp.Due(tokens, int(ss.model.ContextWindow)) {
			t.autoStep = t.step
			switch _, err := ss.compact(ctx, "auto", "", false); {
			case err == nil:
				return t.request(ctx)
			case errors.Is(err, compaction.ErrNothingToCompact):
			case ctx.Err() != nil:
				return llm.Request{}, ctx.Err()
			default:
				ss.observe(Event{Type: EventNotice, Turn: t.n, Step: t.step, Text: "compaction failed, continuing uncompacted: " + err.Error()})
			}
		}
	}
	return req, nil
}

// build assembles and renders the system prompt for the session scope and
// returns the request for the current history, the rendered
// runtime-context snapshot (not yet added) and the live prompt and tools.
// The request sends the session's recorded prefix when there is one (see
// prefixState). It changes nothing.
func (ss *Session) build(ctx context.Context) (llm.Request, string, livePrefix, error) {
	a, err := ss.svc.prompt.Assemble(ctx, systemprompt.AssembleContext{Scope: ss.scope.ID(), Agent: ss})
	if err != nil {
		return llm.Request{}, "", livePrefix{}, fmt.Errorf("assembling the system prompt: %w", err)
	}
	system, err := systemprompt.Render(a)
	if err != nil {
		return llm.Request{}, "", livePrefix{}, fmt.Errorf("rendering the system prompt: %w", err)
	}
	sections, err := systemprompt.RenderSections(a)
	if err != nil {
		return llm.Request{}, "", livePrefix{}, fmt.Errorf("rendering the system prompt: %w", err)
	}
	snapshot, err := systemprompt.RenderContextSnapshot(a)
	if err != nil {
		return llm.Request{}, "", livePrefix{}, fmt.Errorf("rendering the runtime context: %w", err)
	}
	if len(a.Tools) == 0 {
		if err := ss.svc.toolsOffered(ss.scope.ID()); err != nil {
			return llm.Request{}, "", livePrefix{}, err
		}
	}
	seen := make(map[string]bool, len(a.Tools))
	toolList := make([]llm.ToolSchema, 0, len(a.Tools))
	for _, ts := range a.Tools {
		if seen[ts.Name] {
			continue // two providers projecting the same registry
		}
		seen[ts.Name] = true
		toolList = append(toolList, llm.ToolSchema{Name: ts.Name, Description: ts.Description, Parameters: compactSchema(ts.Parameters)})
	}
	live := livePrefix{system: system, sections: sections, tools: toolList}
	ss.mu.Lock()
	system, tools := ss.prefixLocked(live)
	msgs := make([]llm.Message, 0, len(ss.history)+2)
	if system != "" {
		msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: system})
	}
	msgs = append(msgs, ss.history...)
	ss.mu.Unlock()
	return llm.Request{
		Model:    ss.route,
		Messages: msgs,
		Tools:    tools,
		Options:  llm.Options{Thinking: ss.opts.Thinking, ReasoningEffort: ss.opts.ReasoningEffort},
	}, snapshot, live, nil
}

// usage records the step's usage: summed into the turn and the session
// when the provider reported it, otherwise marked estimated (never zero).
func (t *turn) usage(req llm.Request, resp llm.Response) {
	ss := t.ss
	t.res.Steps = t.step
	if resp.Finish == llm.FinishError && !resp.UsageReported {
		return
	}
	rec := t.meterRecord(req, resp)
	if !resp.UsageReported {
		// Estimated figures come from the token meter when one is mounted.
		var est *llm.Usage
		if rec != nil {
			est = &llm.Usage{PromptTokens: int64(rec.PromptTokens), CompletionTokens: int64(rec.CompletionTokens),
				TotalTokens: int64(rec.PromptTokens + rec.CompletionTokens), CacheMissTokens: int64(rec.CacheMissTokens), ReasoningTokens: int64(rec.ReasoningTokens)}
			t.res.Usage, t.res.Estimated = t.res.Usage.Add(*est), true
			ss.spend(*est)
		}
		_ = ss.write(Record{Type: RecordUsage, Turn: t.n, Step: t.step, Usage: est, Estimated: true})
		var inUse int64
		if est != nil {
			inUse = est.PromptTokens + est.CompletionTokens
		}
		inUse = t.contextAfter(req, resp, inUse)
		ss.observe(Event{Type: EventUsage, Turn: t.n, Step: t.step, Usage: est, Estimated: true, Total: ptr(ss.Usage()), ContextTokens: inUse, ResponseModel: resp.Model, ResponseID: resp.ID})
		_ = t.checkBudget(0) // the warning, if the call reached it
		return
	}
	u := resp.Usage
	t.res.Usage = t.res.Usage.Add(u)
	ss.mu.Lock()
	ss.total = ss.total.Add(u)
	total := ss.total
	ss.budget.spendLocked(u, ss.model.Prices)
	ss.mu.Unlock()
	_ = ss.write(Record{Type: RecordUsage, Turn: t.n, Step: t.step, Usage: &u})
	ss.observe(Event{Type: EventUsage, Turn: t.n, Step: t.step, Usage: &u, Total: &total, ContextTokens: t.contextAfter(req, resp, u.PromptTokens+u.CompletionTokens), ResponseModel: resp.Model, ResponseID: resp.ID})
	_ = t.checkBudget(0) // the warning, if the call reached it
}

// contextAfter is the context in use once resp's message joins req: the
// token meter's projection (the figure /context shows, guarded by the
// meter's "usage ≥ estimate" anchor rule), or fallback without a meter.
func (t *turn) contextAfter(req llm.Request, resp llm.Response, fallback int64) int64 {
	if _, ok := core.Lookup(t.ss.svc.c, tokenmeter.Key); !ok {
		return fallback
	}
	next := req
	next.Messages = append(req.Messages[:len(req.Messages):len(req.Messages)], resp.Message)
	n, _ := t.ss.project(next)
	return int64(n)
}

func ptr[T any](v T) *T { return &v }

// runTools logs every call, runs the valid ones through the Scheduler and
// appends one result per call in model order; calls whose arguments are
// not a JSON object get an INVALID_ARGS result without running (B12).
// Additional contexts follow the whole batch (dsh A13).
func (t *turn) runTools(ctx context.Context, calls []llm.ToolCall) (concluded bool, err error) {
	ss := t.ss
	var (
		valid   []tools.Call
		index   []int // index[i] = position in calls of valid[i]
		results = make([]*tools.Outcome, len(calls))
	)
	for i, tc := range calls {
		if err := ss.write(Record{Type: RecordToolCall, Turn: t.n, Step: t.step, CallID: tc.ID, Name: tc.Name, Arguments: tc.Arguments}); err != nil {
			return false, err
		}
		ss.observe(Event{Type: EventToolCall, Turn: t.n, Step: t.step, ToolCall: &ToolCallEvent{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments,
			Presentation: t.present(tc, nil)}})
		if tc.ArgumentsError != "" {
			results[i] = tools.Failure("invalid arguments: "+tc.ArgumentsError, &tools.ErrorInfo{Name: tools.NameToolArgs, Code: tools.CodeInvalidArgs})
			continue
		}
		valid = append(valid, tools.Call{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments, Scope: ss.scope.ID()})
		index = append(index, i)
	}
	// Running calls report their output so far (tools.WithProgress); a
	// report of a call whose result is out is dropped, so a tool_progress
	// never follows its call's tool_result.
	var (
		progressMu sync.Mutex
		finished   = make(map[string]bool, len(calls))
	)
	turnN, step := t.n, t.step
	ctx = tools.WithProgress(ctx, func(p tools.Progress) {
		progressMu.Lock()
		defer progressMu.Unlock()
		if finished[p.CallID] {
			return
		}
		ss.observe(Event{Type: EventToolProgress, Turn: turnN, Step: step, ToolProgress: &ToolProgressEvent{CallID: p.CallID, Name: p.Name, Tail: p.Tail, Bytes: p.Bytes,
			Presentation: &tools.Presentation{ToolCallID: p.CallID, Status: tools.StatusInProgress, Content: []tools.ToolCallContent{tools.TerminalContent(p.CallID, p.Tail, nil, "")}}}})
	})
	// The calls are stored before any of them runs.
	if err := ss.flush(); err != nil {
		return false, err
	}
	next := 0 // first call whose result is not yet recorded
	var werr error
	emitUpTo := func(n int) {
		ss.gather() // the results ready together are written together
		defer func() {
			if err := ss.flush(); err != nil && werr == nil {
				werr = err
			}
		}()
		for ; next < n; next++ {
			if results[next] == nil {
				return
			}
			if err := t.result(calls[next], results[next], results[next].Elapsed); err != nil && werr == nil {
				werr = err
			}
		}
	}
	sched := tools.Scheduler{Registry: ss.svc.tools, Limit: ss.svc.cfg.MaxParallelToolCalls, OnResult: func(i int, o *tools.Outcome) {
		progressMu.Lock()
		finished[valid[i].ID] = true
		progressMu.Unlock()
		results[index[i]] = o
		emitUpTo(len(calls))
	}}
	// Tools resolve relative paths against the session's directory (workdir).
	// Tools keep per-session state (the todo list) through sessionstate.
	// Shell commands get the session's variables (workdir.WithEnv).
	// Subagent tools find the calling session and turn (withTurn).
	outs := sched.Run(withTurn(sessionstate.With(workdir.WithEnv(workdir.With(ctx, ss.opts.Cwd), ss.env), ss), t), valid)
	for i, o := range outs {
		if results[index[i]] == nil {
			results[index[i]] = o
		}
	}
	emitUpTo(len(calls))
	if werr != nil {
		return false, werr
	}
	for _, o := range results {
		concluded = concluded || o.ConcludesTurn
		if o.ConcludesTurn && o.Conclusion != nil {
			t.conclusion = o.Conclusion
		}
		for _, text := range o.AdditionalContexts {
			if err := t.user(text, SourceToolContext); err != nil {
				return false, err
			}
		}
	}
	return concluded, nil
}

// result records one final tool result.
func (t *turn) result(tc llm.ToolCall, o *tools.Outcome, took time.Duration) error {
	ss := t.ss
	text := tools.TextOf(o.Content)
	m := &llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: text}
	p := t.present(tc, o)
	err := ss.append(Record{Type: RecordToolResult, Turn: t.n, Step: t.step, Message: m, CallID: tc.ID, Name: tc.Name,
		Content: o.Content, IsError: o.IsError, Error: o.Error, Meta: o.Meta, Presentation: logged(p)})
	ss.observe(Event{Type: EventToolResult, Turn: t.n, Step: t.step, ToolResult: &ToolResultEvent{
		CallID: tc.ID, Name: tc.Name, Content: text, IsError: o.IsError, Error: o.Error, Meta: o.Meta, DurationMs: took.Milliseconds(), Denied: o.Denied,
		Presentation: p}})
	return err
}

// logged is the part of presentation p a tool/result record keeps (see
// Record.Presentation): all but its content and raw input and output.
func logged(p *tools.Presentation) *tools.Presentation {
	l := *p
	l.Content, l.RawInput, l.RawOutput = nil, nil, nil
	return &l
}

// present is the presentation of call tc: pending without an outcome,
// final with o (see tools.Present).
func (t *turn) present(tc llm.ToolCall, o *tools.Outcome) *tools.Presentation {
	tool, _ := t.ss.svc.tools.Get(tc.Name, t.ss.scope.ID())
	p := tools.Present(tool, tools.PresentCall{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments, Cwd: t.ss.opts.Cwd, Outcome: o})
	return &p
}

// finish completes the Result from err and emits the result event.
func (t *turn) finish(err error) (*Result, error) {
	r := t.res
	r.Steps = t.step
	if t.unsent || t.refused {
		r.Steps-- // the step the budget stopped, or the route refused up front, made no model call
	}
	t.childMu.Lock()
	if t.children != nil {
		r.SubagentUsage = t.children
		r.Usage = r.Usage.Add(*t.children)
	}
	t.childMu.Unlock()
	r.DurationMs = time.Since(t.start).Milliseconds()
	if p := t.ss.model.Prices; p.Known() {
		cost := p.Cost(r.Usage)
		r.TotalCostUSD = &cost
	}
	switch {
	case err == nil:
		if r.Reason == "" {
			r.Reason = "stop"
		}
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		r.IsError, r.Reason = true, "aborted"
	case errors.Is(err, ErrMaxSteps):
		r.IsError, r.Reason = true, "max_steps"
	case errors.Is(err, ErrBudget):
		r.IsError, r.Reason = true, "budget"
	default:
		r.IsError, r.Reason = true, "error"
		if le, ok := llm.AsError(err); ok {
			r.Code, r.Status = string(le.Code), le.Status
		}
	}
	if err != nil {
		r.Error = err.Error()
	}
	t.ss.observe(Event{Type: EventResult, Turn: t.n, Step: t.step, Result: r})
	return r, err
}

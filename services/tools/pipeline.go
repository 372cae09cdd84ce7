package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/dshgo/harness/core"
)

// Execute runs one call through the whole pipeline, in the order of dsh A9:
//
//  1. create the execution: resolve the visible tool (unknown: UNKNOWN_TOOL),
//     validate and freeze the arguments (invalid: INVALID_ARGS, final);
//  2. caller already cancelled: ABORTED_BEFORE_DISPATCH, final;
//  3. PreExecute waterfall (merged with OnPreExecute votes; an Approve vote
//     lifts Soft votes); when a vote rewrote the arguments, they are
//     validated again (INVALID_ARGS, final) and step 3 runs again on them;
//  4. ask: the approval service (ApprovalKey) looked up now; absent: deny;
//  5. cancel: ABORTED_BEFORE_DISPATCH;
//  6. guards, global then the scope chain farthest to nearest, walked live (a
//     guard added during the walk to a layer not yet finished runs in this
//     call): first reason denies;
//  7. denial: "Error: <reason>";
//  8. caller cancelled meanwhile: ABORTED_BEFORE_DISPATCH;
//  9. Execute waterfall around the body (the tool is resolved again; the body is
//     never abandoned once started; output rendered and its meta computed);
//  10. a listener-authored success is re-rendered; deferred contexts prepended;
//     a success of a cancelled caller becomes ABORTED (body ran) or
//     ABORTED_BEFORE_DISPATCH;
//  11. PostExecute waterfall over every result that passed 1–2 and did not fail
//     in a listener, then cancellation again replaces only a success;
//  12. finalize (the tool's WithFinalize hook), then the Result event.
//
// Execute never panics and never returns an error: every failure, including a
// panicking body or listener, is an Outcome with IsError set. A contained
// panic (body, listener, guard, approval service, render) is reported like
// core reports one: Outcome.Err wraps a *core.PanicError with the panic value
// and stack, and PostExecute listeners and Result observers see that Outcome.
func (r *Registry) Execute(ctx context.Context, call Call) *Outcome {
	if ctx == nil {
		ctx = context.Background()
	}
	e := r.prepare(ctx, call)
	if e.route == routeDispatch {
		r.dispatch(e)
	}
	return r.finish(e)
}

func (r *Registry) logger() *slog.Logger { return r.c.Logger() }

// recovered turns a recovered panic value into an error that names where it
// happened and wraps a *core.PanicError (value and stack), and logs the stack.
// Call it from the deferred function that recovered, so that the stack is the
// panicking goroutine's.
func (r *Registry) recovered(where string, v any) error {
	pe := &core.PanicError{Value: v, Stack: debug.Stack()}
	r.logger().Error("tools: panic contained", "where", where, "panic", fmt.Sprint(v), "stack", string(pe.Stack))
	return &containedPanic{where: where, panic: pe}
}

// containedPanic is the error of a panic contained by the pipeline: its
// message is "<where> panicked: <value>" and it unwraps to the
// *core.PanicError.
type containedPanic struct {
	where string
	panic *core.PanicError
}

func (e *containedPanic) Error() string {
	return fmt.Sprintf("%s panicked: %v", e.where, e.panic.Value)
}
func (e *containedPanic) Unwrap() error { return e.panic }

// prepare runs steps 1–8 and sets e.route.
func (r *Registry) prepare(ctx context.Context, call Call) (e *Execution) {
	e = &Execution{reg: r, call: call, ctx: ctx}
	r.mu.RLock()
	e.tool = r.resolve(call.Name, call.Scope)
	e.gen = r.gen.Load()
	r.mu.RUnlock()
	if e.tool == nil {
		return e.post(unknownTool(call.Name))
	}
	if o := e.bind(e.tool); o != nil {
		return e.final(o)
	}
	if ctx.Err() != nil {
		return e.final(abortedBeforeDispatch())
	}
	var d Decision // allow when nobody listens
	if core.Listeners(r.c, PreExecute) > 0 {
		var err error
		if d, err = r.preExecute(ctx, e); err != nil {
			return e.final(errorOutcome(err))
		}
		if d, err = r.rewrite(ctx, e, d); err != nil {
			return e.final(errorOutcome(err))
		}
		if e.outcome != nil {
			return e
		}
	}
	if d.Kind == DecisionAsk {
		var err error
		if d, err = r.ask(ctx, e, d); err != nil {
			return e.final(errorOutcome(err))
		}
	}
	switch d.Kind {
	case DecisionAsk, DecisionDeny:
	case DecisionCancel:
		return e.post(abortedBeforeDispatch())
	case DecisionAllow:
		reason, err := r.runGuards(e)
		if err != nil {
			return e.final(errorOutcome(err))
		}
		if reason != "" {
			d = Deny(reason)
		}
	default: // fail closed on a decision this registry does not know
		return e.final(Failure(fmt.Sprintf("tools/pre-execute returned an invalid decision kind %v", d.Kind), nil))
	}
	if d.Kind == DecisionDeny {
		if d.Reason == "" {
			d.Reason = fmt.Sprintf("tool %q was denied by policy", call.Name)
		}
		o := Failure(d.Reason, d.Info)
		o.Denied = true
		return e.post(o)
	}
	if ctx.Err() != nil {
		return e.post(abortedBeforeDispatch())
	}
	e.route = routeDispatch
	return e
}

func (e *Execution) final(o *Outcome) *Execution {
	e.outcome, e.route = o, routeFinal
	return e
}

func (e *Execution) post(o *Outcome) *Execution {
	e.outcome, e.route = o, routePost
	return e
}

// bind validates the call's arguments against t and decodes them; it returns
// the INVALID_ARGS outcome on failure.
func (e *Execution) bind(t *Tool) *Outcome {
	raw := e.call.Arguments
	if (raw == "" || raw == "{}") && t.zeroArgs != nil {
		e.args, e.coerced, e.bound = t.zeroArgs, nil, true
		return nil
	}
	v, err := t.validator()
	if err != nil {
		return argsFailure(&ArgsError{Tool: t.name, Violations: []Violation{{Rule: "schema",
			Message: "the tool's parameter schema does not compile: " + err.Error()}}})
	}
	normalized, coerced, violations := v.check(raw)
	if violations != nil {
		return argsFailure(&ArgsError{Tool: t.name, Violations: violations})
	}
	args, err := t.decode(normalized)
	if err != nil {
		return argsFailure(&ArgsError{Tool: t.name, Violations: []Violation{decodeViolation(err, normalized, raw)}})
	}
	e.args, e.coerced, e.bound = args, nil, true
	if len(coerced) > 0 {
		e.coerced = &coercion{arguments: normalized, notes: coerced}
		e.reg.logger().Debug("tools: arguments coerced", "tool", t.name, "call", e.call.ID, "coercions", coerced)
	}
	return nil
}

func argsFailure(err *ArgsError) *Outcome {
	return Failure(err.Error(), &ErrorInfo{Name: NameToolArgs, Code: CodeInvalidArgs})
}

func allowInner(context.Context, *Execution) (Decision, error) { return Decision{}, nil }

// rewrite applies a vote's replacement of the arguments (Decision.Arguments)
// after the first pre-execute round decided d: unless d denies or cancels,
// the new arguments are validated (INVALID_ARGS, final, when they do not
// fit) and the pre-execute stage runs again on them, with the rewriting
// vote's own answer merged in. It sets e's outcome when the call ends here.
func (r *Registry) rewrite(ctx context.Context, e *Execution, d Decision) (Decision, error) {
	e.mu.Lock()
	rw, conflict := e.votes.rewrite, e.votes.conflict
	e.mu.Unlock()
	if rw == nil || d.Kind == DecisionDeny || d.Kind == DecisionCancel {
		return d, nil
	}
	if conflict {
		return Deny(fmt.Sprintf("two pre-execute votes rewrote the arguments of tool %q differently; the call was not run", e.call.Name)), nil
	}
	before := e.Arguments()
	e.call.Arguments, e.coerced, e.bound = rw.Arguments, nil, false
	if o := e.bind(e.tool); o != nil {
		o.ErrorMessage = "the arguments a pre-execute hook rewrote are invalid: " + o.ErrorMessage
		o.Content = []Content{Text("Error: " + o.ErrorMessage)}
		e.final(o)
		return d, nil
	}
	r.logger().Info("tools: arguments rewritten by a pre-execute vote", "tool", e.call.Name, "call", e.call.ID,
		"before", clip(before, 200), "after", clip(e.Arguments(), 200))
	carried := *rw
	carried.Arguments = ""
	e.mu.Lock()
	e.votes, e.recheck = votes{}, true
	e.mu.Unlock()
	e.vote(carried)
	d, err := r.preExecute(ctx, e)
	if err != nil {
		return d, err
	}
	e.mu.Lock()
	again := e.votes.rewrite
	e.mu.Unlock()
	if again != nil && again.Arguments != e.Arguments() && again.Arguments != rw.Arguments {
		return Deny(fmt.Sprintf("the arguments of tool %q were rewritten again while the rewrite was re-checked; the call was not run", e.call.Name)), nil
	}
	return d, nil
}

// clip shortens s to at most n bytes for a log line.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func (r *Registry) preExecute(ctx context.Context, e *Execution) (d Decision, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = r.recovered("tools/pre-execute listener", v)
		}
	}()
	d, err = PreExecute.Run(ctx, r.c.To(e.call.Scope), e, allowInner)
	if err != nil {
		return Decision{}, err
	}
	d.Soft, d.Approve, d.Arguments = false, false, ""
	soft := d.Kind < DecisionAsk && e.onlySoftAsk()
	e.mu.Lock()
	e.softAsk = soft
	e.mu.Unlock()
	return Merge(d, e.votesSoFar()), nil
}

// undecided is the inner function of PermissionRequest: nobody decided.
func undecided(context.Context, PermissionAsk) (PermissionVerdict, error) {
	return PermissionVerdict{}, nil
}

// ask resolves an ask decision: PermissionRequest listeners may answer it,
// else the approval service does.
func (r *Registry) ask(ctx context.Context, e *Execution, d Decision) (out Decision, err error) {
	name := e.call.Name
	approver, ok := core.Lookup(r.c, ApprovalKey)
	if !ok || approver == nil {
		if d.Reason != "" {
			return Deny(d.Reason), nil
		}
		return Deny(fmt.Sprintf("tool %q requires approval (not yet supported)", name)), nil
	}
	defer func() {
		if v := recover(); v != nil {
			err = r.recovered("approval service", v)
		}
	}()
	req := ApprovalRequest{
		Scope: e.call.Scope, Tool: name, CallID: e.call.ID, Arguments: e.Arguments(),
		Reason: d.Reason, DisplayReason: d.DisplayReason, AlwaysRules: d.AlwaysRules,
	}
	if core.Listeners(r.c, PermissionRequest) > 0 {
		e.mu.Lock()
		soft := e.softAsk
		e.mu.Unlock()
		v, err := PermissionRequest.Run(ctx, r.c.To(e.call.Scope), PermissionAsk{Request: req, Soft: soft}, undecided)
		if err != nil {
			return Decision{}, fmt.Errorf("permission request for tool %q failed: %w", name, err)
		}
		switch {
		case v.Deny:
			reason := v.Reason
			if reason == "" {
				reason = fmt.Sprintf("a permission-request listener denied tool %q", name)
			}
			return Deny(reason), nil
		case v.Allow && soft:
			return Allow(), nil
		}
	}
	var answer ApprovalAnswer
	asked := time.Now()
	if da, ok := approver.(DetailedApprover); ok {
		answer, err = da.AskDetailed(ctx, req)
	} else {
		answer.Outcome, err = approver.Ask(ctx, req)
	}
	e.waited += time.Since(asked) // a person's wait is not the call's time
	if err != nil {
		return Decision{}, fmt.Errorf("approval for tool %q failed: %w", name, err)
	}
	switch answer.Outcome {
	case ApprovalAllowedOnce, ApprovalAllowedAlways:
		return Allow(), nil
	case ApprovalRejected:
		if why := strings.TrimSpace(answer.Reason); why != "" {
			return Deny(fmt.Sprintf("the user rejected tool %q and said: %s", name, why)), nil
		}
		return Deny(fmt.Sprintf("the user rejected tool %q", name)), nil
	case ApprovalCancelled:
		if ctx.Err() != nil {
			return Cancel(), nil
		}
		return Deny(fmt.Sprintf("approval for tool %q was cancelled", name)), nil
	case ApprovalUnavailable:
		return Deny(fmt.Sprintf("tool %q requires approval, but no approval channel is available", name)), nil
	}
	return Decision{}, fmt.Errorf("unreachable: approval service returned %v for tool %q", answer.Outcome, name)
}

func (r *Registry) runGuards(e *Execution) (reason string, err error) {
	if r.guards.Load() == 0 {
		return "", nil
	}
	defer func() {
		if v := recover(); v != nil {
			err = r.recovered("tool guard", v)
		}
	}()
	// The walk is live (reference A9 step 6, "live iteration"): the layers
	// are read again before each guard, so a guard registered during the
	// walk (by another guard, or concurrently) is run in this same call when
	// its layer has not been finished yet, and one removed before its turn is
	// not run. Each guard runs at most once.
	var seen []*guardEntry
	for _, scope := range guardOrder(e.call.Scope) {
		for {
			g := r.nextGuard(scope, seen)
			if g == nil {
				break
			}
			seen = append(seen, g)
			if reason = g.fn(e); reason != "" {
				return reason, nil
			}
		}
	}
	return "", nil
}

// guardOrder lists the layers guards run in: global (nil) first, then scope's
// chain farthest to nearest.
func guardOrder(scope *core.ScopeID) []*core.ScopeID {
	order := []*core.ScopeID{nil}
	if scope != nil {
		ch := scope.Chain()
		for i := len(ch) - 1; i >= 0; i-- {
			order = append(order, ch[i])
		}
	}
	return order
}

// nextGuard returns the first guard of scope's layer (nil: global) not in
// seen, in registration order; nil when there is none.
func (r *Registry) nextGuard(scope *core.ScopeID, seen []*guardEntry) *guardEntry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	l := r.layerFor(scope, false)
	if l == nil {
		return nil
	}
	for _, g := range l.guards {
		if !slices.Contains(seen, g) {
			return g
		}
	}
	return nil
}

// dispatch runs steps 9–10.
func (r *Registry) dispatch(e *Execution) {
	o, err := r.executeWaterfall(e)
	if err != nil {
		e.final(errorOutcome(err))
		return
	}
	if o == nil {
		e.final(Failure("a tools/execute listener returned no outcome", nil))
		return
	}
	if o.exec != e {
		if o, err = r.adopt(e, o); err != nil {
			e.final(errorOutcome(err))
			return
		}
		if o.exec == nil { // invalid listener-authored value: final
			e.final(o)
			return
		}
	}
	if deferred, concludes := e.deferredContexts(); len(deferred) > 0 || concludes {
		c := *o
		c.AdditionalContexts = append(append([]string(nil), deferred...), o.AdditionalContexts...)
		c.ConcludesTurn = concludes && !o.IsError
		if c.ConcludesTurn {
			c.Conclusion = e.concluded()
		}
		o = &c
	}
	if e.ctx.Err() != nil && !o.IsError {
		o = e.cancelled()
	}
	e.post(o)
}

func (e *Execution) cancelled() *Outcome {
	if e.started {
		return aborted()
	}
	return abortedBeforeDispatch()
}

func (r *Registry) executeWaterfall(e *Execution) (o *Outcome, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = r.recovered("tools/execute listener", v)
		}
	}()
	if core.Listeners(r.c, Execute) == 0 {
		return bodyInner(e.ctx, e)
	}
	return Execute.Run(e.ctx, r.c.To(e.call.Scope), e, bodyInner)
}

// adopt normalizes an outcome authored by an Execute listener: a failure is
// taken as is; a success is re-rendered from its Value under the current tool.
// An invalid value yields an outcome with exec == nil (final).
func (r *Registry) adopt(e *Execution, o *Outcome) (*Outcome, error) {
	if o.IsError {
		c := *o
		c.Value, c.exec = nil, e
		if c.Content == nil {
			c.Content = []Content{Text("Error: " + c.ErrorMessage)}
		}
		return &c, nil
	}
	t := e.current()
	if t == nil {
		n := unknownTool(e.call.Name)
		n.exec = e
		return n, nil
	}
	v, err := t.convert(o.Value)
	if err != nil {
		return invalidOutput(t.name, err.Error()), nil
	}
	n := r.normalize(t, e, v)
	if n.IsError && n.Error != nil && n.Error.Code == CodeInvalidToolOutput {
		n.exec = nil
		return n, nil
	}
	n.AdditionalContexts = o.AdditionalContexts
	return n, nil
}

// current resolves the call's tool again (it may have been unregistered): the
// tool resolved when the call was created while the registry is unchanged.
func (e *Execution) current() *Tool {
	if e.reg.gen.Load() == e.gen {
		return e.tool
	}
	e.reg.mu.RLock()
	defer e.reg.mu.RUnlock()
	return e.reg.resolve(e.call.Name, e.call.Scope)
}

// bodyInner is the end of the Execute waterfall: it runs the body under a
// context fused with the caller's and normalizes its value.
func bodyInner(ctx context.Context, e *Execution) (*Outcome, error) {
	r := e.reg
	if ctx != e.ctx {
		fused, cancel := context.WithCancelCause(ctx)
		stop := context.AfterFunc(e.ctx, func() { cancel(context.Cause(e.ctx)) })
		defer func() { stop(); cancel(nil) }()
		ctx = fused
	}
	if ctx.Err() != nil {
		return e.own(abortedBeforeDispatch()), nil
	}
	t := e.current()
	if t == nil {
		return e.own(unknownTool(e.call.Name)), nil
	}
	if t != e.tool { // re-registered under the same name: validate again
		if o := e.bind(t); o != nil {
			return e.own(o), nil
		}
	}
	e.started = true
	value, err := r.runBody(ctx, t, e)
	if err != nil {
		if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			return e.own(aborted()), nil
		}
		return e.own(errorOutcome(err)), nil
	}
	o := r.normalize(t, e, value)
	if !o.IsError && ctx.Err() != nil {
		return e.own(aborted()), nil
	}
	return o, nil
}

func (e *Execution) own(o *Outcome) *Outcome {
	o.exec = e
	return o
}

func (r *Registry) runBody(ctx context.Context, t *Tool, e *Execution) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = r.recovered(fmt.Sprintf("tool %q", t.name), p)
		}
	}()
	return t.run(ctx, e, e.args)
}

// normalize turns a canonical value into a success (A5): validate (raw tools
// with an output schema), render, presentation meta for top-level calls.
func (r *Registry) normalize(t *Tool, e *Execution, value any) *Outcome {
	if s, ok := value.(string); ok && t.outCheck == nil && t.render == nil && (t.meta == nil || e.call.Parent != nil) {
		o := e.newOutcome() // no user code runs: a string is its own text block
		o.Value = value
		o.inline[0] = Text(s)
		o.Content = o.inline[:]
		return o
	}
	return r.normalizeValue(t, e, value)
}

func (r *Registry) normalizeValue(t *Tool, e *Execution, value any) (o *Outcome) {
	defer func() {
		if p := recover(); p != nil {
			err := r.recovered("output render", p)
			o = e.own(invalidOutput(t.name, err.Error()))
			o.Err = err
		}
	}()
	if t.outCheck != nil {
		inst, err := toJSONValue(value)
		if err != nil {
			return e.own(invalidOutput(t.name, "value is not lossless JSON"))
		}
		if vs := t.outCheck.validateValue(inst); vs != nil {
			return e.own(invalidOutput(t.name, joinViolations(vs)))
		}
	}
	o = e.newOutcome()
	o.Value = value
	if s, ok := value.(string); ok && t.render == nil {
		o.inline[0] = Text(s)
		o.Content = o.inline[:]
	} else {
		content, err := t.renderValue(e.args, value)
		if err != nil {
			return e.own(invalidOutput(t.name, "output render failed: "+err.Error()))
		}
		o.Content = content
	}
	if t.meta != nil && e.call.Parent == nil {
		m, err := t.meta(e.args, value)
		if err == nil && m != nil {
			o.Meta, err = json.Marshal(m)
		}
		if err != nil {
			return e.own(invalidOutput(t.name, "presentation meta failed: "+err.Error()))
		}
	}
	return o
}

func (t *Tool) renderValue(args, value any) ([]Content, error) {
	if t.render != nil {
		return t.render(args, value)
	}
	switch v := value.(type) {
	case string:
		return []Content{Text(v)}, nil
	case []Content:
		return v, nil
	case json.RawMessage:
		return []Content{Text(string(v))}, nil
	}
	b, err := json.Marshal(value)
	if err != nil {
		return nil, fmt.Errorf("value is not lossless JSON: %w", err)
	}
	return []Content{Text(string(b))}, nil
}

func toJSONValue(v any) (any, error) {
	b, ok := v.(json.RawMessage)
	if !ok {
		var err error
		if b, err = json.Marshal(v); err != nil {
			return nil, err
		}
	}
	return parseJSON(string(b))
}

func acceptInner(context.Context, *Execution) (PostDecision, error) { return PostDecision{}, nil }

// finish runs steps 11–12 and returns the final outcome.
func (r *Registry) finish(e *Execution) *Outcome {
	detached := e.ctx // not cancelled by the caller: post-execute and Result always run
	if e.ctx.Done() != nil {
		detached = context.WithoutCancel(e.ctx)
	}
	if e.route == routePost && core.Listeners(r.c, PostExecute) > 0 {
		e.outcome = r.postExecute(detached, e)
		if e.ctx.Err() != nil && !e.outcome.IsError {
			e.outcome = e.cancelled()
		}
	}
	if t := e.tool; t != nil && t.finalize != nil {
		r.finalize(t, e)
	}
	e.outcome.exec = e
	if core.Listeners(r.c, Result) > 0 {
		Result.Emit(detached, r.c.To(e.call.Scope), e)
	}
	return e.outcome
}

func (r *Registry) finalize(t *Tool, e *Execution) {
	defer func() {
		if p := recover(); p != nil {
			_ = r.recovered(fmt.Sprintf("tool %q finalize", t.name), p) // logged; finalize has no result to carry it
		}
	}()
	if content := t.finalize(e, e.outcome); content != nil {
		c := *e.outcome
		c.Content = content
		e.outcome = &c
	}
}

func (r *Registry) postExecute(ctx context.Context, e *Execution) (o *Outcome) {
	defer func() {
		if p := recover(); p != nil {
			o = errorOutcome(r.recovered("tools/post-execute listener", p))
		}
	}()
	d, err := PostExecute.Run(ctx, r.c.To(e.call.Scope), e, acceptInner)
	if err != nil {
		return errorOutcome(err)
	}
	return r.apply(e, d)
}

// apply applies a post-execute decision to e.outcome (A10).
func (r *Registry) apply(e *Execution, d PostDecision) *Outcome {
	o := e.outcome
	switch d.Kind {
	case PostAccept:
		if d.Content != nil && d.ReplaceValue {
			return Failure("tools/post-execute accept decision cannot replace both value and content", nil)
		}
		if d.Content == nil && !d.ReplaceValue && len(d.AdditionalContexts) == 0 {
			return o
		}
		if d.ReplaceValue {
			if o.IsError {
				return Failure("tools/post-execute cannot replace the value of a failed result", nil)
			}
			t := e.current()
			if t == nil {
				return unknownTool(e.call.Name)
			}
			v, err := t.convert(d.Value)
			if err != nil {
				return invalidOutput(t.name, err.Error())
			}
			n := r.normalize(t, e, v)
			if !n.IsError {
				n.AdditionalContexts, n.ConcludesTurn = o.AdditionalContexts, o.ConcludesTurn
			}
			o = n
		}
		c := *o
		if d.Content != nil {
			c.Content = append([]Content(nil), d.Content...)
		}
		if len(d.AdditionalContexts) > 0 {
			c.AdditionalContexts = append(append([]string(nil), o.AdditionalContexts...), d.AdditionalContexts...)
		}
		return &c
	case PostBlock:
		msg := TextOf(d.Feedback)
		if msg == "" {
			msg = "tool result blocked by post-execute policy"
		}
		b := Failure(msg, nil)
		if len(d.Feedback) > 0 {
			b.Content = append([]Content(nil), d.Feedback...)
		}
		b.AdditionalContexts = append([]string(nil), d.AdditionalContexts...)
		return b
	}
	return Failure(fmt.Sprintf("tools/post-execute returned an invalid decision kind %v", d.Kind), nil)
}

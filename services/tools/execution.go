package tools

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dshgo/harness/core"
)

// Call is the caller's input for one tool call: what the model asked for and
// where it runs.
type Call struct {
	// ID is the model's tool-call id (required by the agent loop; may be empty
	// for ad-hoc calls such as `harness tool`).
	ID string
	// RootID is the id of the outermost call of a nested (PTC) chain; defaults to ID.
	RootID string
	// Name is the tool name as the model spelled it.
	Name string
	// Arguments is the model's raw JSON argument text; "" means {}.
	Arguments string
	// Scope is the agent (session) scope the call belongs to; nil is the global
	// scope. It selects the visible tools and the scoped listeners that run.
	Scope *core.ScopeID
	// Parent is the token of the enclosing transport call for nested calls
	// (PTC seam); nil for calls made directly by the model.
	Parent *Token
}

// Token identifies one execution: equality only, never serialized.
type Token struct{ _ byte }

type route uint8

const (
	routeDispatch route = iota // policy passed: run the Execute waterfall
	routePost                  // outcome set; PostExecute still runs
	routeFinal                 // outcome set; skip PostExecute
)

// Execution is the pipeline's view of one call: its identity, the frozen
// (validated, possibly coerced) arguments, and, from PostExecute on, the
// outcome under review. It is the payload of PreExecute, Execute, PostExecute
// and Result. Its accessors are safe for concurrent use; it is never mutated
// by the registry while listeners run, except through the body-only methods
// DeferContext and ConcludeTurn.
type Execution struct {
	reg     *Registry
	tool    *Tool  // the definition visible when the call was created
	gen     uint64 // the registry generation tool was resolved in
	call    Call
	args    any
	coerced *coercion       // set when coercion re-encoded the arguments
	ctx     context.Context // the caller's context
	outcome *Outcome
	storage Outcome // backing store of the first normalized outcome (saves an allocation)

	mu       sync.Mutex // guards deferred and votes
	votes    votes      // the OnPreExecute votes of the current round
	recheck  bool       // the pre-execute stage runs again after a rewrite
	softAsk  bool       // the pre-execute ask came from soft votes only
	deferred *[]string  // DeferContext messages, FIFO (nil: none)
	// conclusion is ConcludeTurnAs's reason and text (guarded by mu).
	conclusion *Conclusion

	waited time.Duration // time spent waiting for an approval answer

	tok     Token
	route   route
	bound   bool          // the arguments passed validation ("" reads as "{}")
	started bool          // the body was invoked
	posted  atomic.Uint32 // postedDeferred | postedConcludes, set by the body
}

// Bits of Execution.posted: a body called DeferContext / ConcludeTurn.
const (
	postedDeferred uint32 = 1 << iota
	postedConcludes
)

// coercion is the result of coercing arguments: their re-encoding and the notes.
type coercion struct {
	arguments string
	notes     []string
}

// CallID returns the model's tool-call id.
func (e *Execution) CallID() string { return e.call.ID }

// RootCallID returns the outermost call id (the call id when not nested).
func (e *Execution) RootCallID() string {
	if e.call.RootID != "" {
		return e.call.RootID
	}
	return e.call.ID
}

// Name returns the called tool name.
func (e *Execution) Name() string { return e.call.Name }

// Arguments returns the validated argument JSON text: the model's text, or its
// normalized re-encoding when a value was coerced ("{}" for empty input).
func (e *Execution) Arguments() string {
	switch {
	case e.coerced != nil:
		return e.coerced.arguments
	case e.bound && e.call.Arguments == "":
		return "{}"
	}
	return e.call.Arguments
}

// RawArguments returns the argument text exactly as the caller passed it.
func (e *Execution) RawArguments() string { return e.call.Arguments }

// Args returns the decoded arguments: the Args struct value of a typed tool,
// json.RawMessage for a raw tool, nil when validation failed or the tool is
// unknown.
func (e *Execution) Args() any { return e.args }

// Coercions lists the coercions applied to the arguments (integer-valued
// strings turned into numbers), e.g. `/limit: coerced string "5" to the number 5`.
func (e *Execution) Coercions() []string {
	if e.coerced == nil {
		return nil
	}
	return append([]string(nil), e.coerced.notes...)
}

// Scope returns the call's scope (nil: global).
func (e *Execution) Scope() *core.ScopeID { return e.call.Scope }

// Parent returns the enclosing call's token, or nil for a model-direct call.
func (e *Execution) Parent() *Token { return e.call.Parent }

// Token returns this execution's identity token.
func (e *Execution) Token() *Token { return &e.tok }

// Tool returns the definition visible when the call was created, or nil for
// an unknown tool.
func (e *Execution) Tool() *Tool { return e.tool }

// Context returns the caller's context (cancellation of the call).
func (e *Execution) Context() context.Context { return e.ctx }

// BodyStarted reports whether the tool's body was invoked: false for a call
// that was denied, cancelled, failed validation or named an unknown tool, so
// a PostExecute listener can tell a result of a call that never ran. It is
// meaningful from PostExecute on.
func (e *Execution) BodyStarted() bool { return e.started }

// Outcome returns the outcome under review in PostExecute and the final outcome
// in Result; nil before.
func (e *Execution) Outcome() *Outcome { return e.outcome }

// DeferContext queues a user-role message (e.g. a reminder) to ride the
// result's AdditionalContexts, FIFO, even if the body then fails. For bodies.
func (e *Execution) DeferContext(message string) {
	e.mu.Lock()
	if e.deferred == nil {
		e.deferred = new([]string)
	}
	*e.deferred = append(*e.deferred, message)
	e.posted.Or(postedDeferred)
	e.mu.Unlock()
}

// ConcludeTurn marks a successful result as ending the model's turn. For bodies.
func (e *Execution) ConcludeTurn() { e.posted.Or(postedConcludes) }

// ConcludeTurnAs is ConcludeTurn naming why the turn ends and what it
// answers: the agent's result then has Reason reason (instead of
// "concluded") and, when text is not empty, Text text. The plan-mode
// plugin ends a turn no one can approve the plan of this way (reason
// "plan", the plan as the text). For bodies; the last call wins.
func (e *Execution) ConcludeTurnAs(reason, text string) {
	e.mu.Lock()
	e.conclusion = &Conclusion{Reason: reason, Text: text}
	e.mu.Unlock()
	e.posted.Or(postedConcludes)
}

// concluded is the ConcludeTurnAs conclusion (nil: none).
func (e *Execution) concluded() *Conclusion {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.conclusion
}

func (e *Execution) deferredContexts() ([]string, bool) {
	p := e.posted.Load()
	concludes := p&postedConcludes != 0
	if p&postedDeferred == 0 {
		return nil, concludes
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return *e.deferred, concludes
}

// votes are the OnPreExecute votes of one pre-execute round, merged as they
// arrive: hard ones and soft ones apart, so that an approval can lift the
// soft ones whatever the order.
type votes struct {
	hard, soft Decision
	approved   bool      // some vote was Approve
	rewrite    *Decision // the first vote that rewrote the arguments
	conflict   bool      // another vote rewrote them differently
}

func (e *Execution) vote(d Decision) {
	e.mu.Lock()
	defer e.mu.Unlock()
	v := &e.votes
	if d.Arguments != "" {
		switch {
		case v.rewrite == nil:
			c := d
			v.rewrite = &c
		case v.rewrite.Arguments != d.Arguments:
			v.conflict = true
		}
		d.Arguments = ""
	}
	switch {
	case d.Kind == DecisionAllow:
		v.approved = v.approved || d.Approve
	case d.Soft && (d.Kind == DecisionAsk || d.Kind == DecisionDeny):
		v.soft = Merge(v.soft, d)
	default:
		v.hard = Merge(v.hard, d)
	}
}

// votesSoFar merges the round's votes: the hard ones, and the soft ones
// unless some vote approved the call.
func (e *Execution) votesSoFar() Decision {
	e.mu.Lock()
	defer e.mu.Unlock()
	d := e.votes.hard
	if !e.votes.approved {
		d = Merge(d, e.votes.soft)
	}
	d.Soft, d.Approve, d.Arguments = false, false, ""
	return d
}

// onlySoftAsk reports whether the round's ask comes from soft votes alone
// (no hard vote asks or denies).
func (e *Execution) onlySoftAsk() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.votes.hard.Kind < DecisionAsk && !e.votes.approved && e.votes.soft.Kind == DecisionAsk
}

// Rechecking reports whether the pre-execute stage is running again because
// a vote rewrote the call's arguments (Decision.Arguments). A vote that
// rewrites should then answer Allow: its first answer is kept.
func (e *Execution) Rechecking() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.recheck
}

// newOutcome returns a zeroed outcome owned by e: the embedded one the first
// time (only the goroutine running the execution's current stage calls it).
func (e *Execution) newOutcome() *Outcome {
	if e.storage.exec == nil { // never reset once set
		e.storage.exec = e
		return &e.storage
	}
	return &Outcome{exec: e}
}

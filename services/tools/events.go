package tools

import (
	"context"

	"github.com/dshgo/harness/core"
)

// PreExecute is the policy waterfall run before any body (dsh tools/pre-execute).
// The payload is the execution (arguments already validated); next returns the
// decision of the rest of the chain (allow at the end). A listener that returns
// without calling next short-circuits; an error or panic fails the call closed
// (an error result, the body never runs). Dispatched to the call's scope:
// scoped listeners hear only their scope's calls.
//
// Policy listeners should prefer OnPreExecute, whose decisions merge
// deny > cancel > ask > allow whatever the listener order. Denials that nothing
// may override belong in guards (Registry.Guard).
var PreExecute = core.NewWaterfallEvent[*Execution, Decision]("tools/pre-execute")

// Execute is the around-dispatch waterfall (dsh tools/execute): deadlines,
// retries, metrics. next runs the rest of the chain and, at the end, the body,
// returning a normalized outcome (failures are outcomes, not errors). A
// listener may pass a derived context to next (a deadline); the body's context
// is always also cancelled by the caller's, so caller cancellation cannot be
// detached. A listener-authored success is re-rendered from its Value; a
// listener error or panic becomes an error result that skips PostExecute.
var Execute = core.NewWaterfallEvent[*Execution, *Outcome]("tools/execute")

// PostExecute is the result waterfall (dsh tools/post-execute). It runs over
// every result that went through policy (successes, tool errors, denials,
// cancellations, unknown tools); Execution.Outcome is the result under review
// and next returns the rest of the chain's decision (accept at the end). See
// PostDecision for what a decision may do. A listener error or panic becomes an
// error result. It runs with a context that is not cancelled by the caller, so
// redaction listeners always see the result.
var PostExecute = core.NewWaterfallEvent[*Execution, PostDecision]("tools/post-execute")

// Result is emitted once per call with the final outcome (Execution.Outcome),
// after finalize, to the call's scope. Observer failures are contained and
// logged; they never change the outcome.
var Result = core.NewEmitEvent[*Execution]("tools/result")

// Changed is dispatched (unscoped: every listener sees every change) after a
// tool is registered or unregistered or a restriction is added or removed; the
// payload is the registry. It is a serial event so that a failing listener is
// seen, with the same semantics as the system prompt's change event: an error
// (or panic) from a listener during a registration rolls the registration
// back and is returned by Register or Restrict ("tool x: change listener:
// ..."); during a removal it is only logged. Listeners return handled=false to
// let the others run. Guards do not fire it.
var Changed = core.NewBailEvent[*Registry, struct{}]("tools/change")

// OnPreExecute registers fn as a pre-execute policy vote on c's fiber (an
// effect: removed when the fiber unloads). Unlike a raw PreExecute listener a
// vote never short-circuits: the rest of the chain always runs (so audit
// listeners see every call), and the registry merges every vote with the
// waterfall's result, strongest first (deny > cancel > ask > allow), so no
// listener, whatever its position, can weaken a vote (only an Approve vote
// lifts the Soft votes; see Decision). Votes are prepended, so
// an ordinary listener registered before them cannot skip them. An error fails
// the call closed.
func OnPreExecute(c *core.Context, fn func(ctx context.Context, e *Execution) (Decision, error)) error {
	return core.On(c, PreExecute, func(ctx context.Context, e *Execution, next core.Next[*Execution, Decision]) (Decision, error) {
		d, err := fn(ctx, e)
		if err != nil {
			return Decision{}, err
		}
		e.vote(d)
		rest, err := next(ctx, e)
		if err != nil {
			return Decision{}, err
		}
		return rest, nil // the votes are merged by the registry (Execution.votesSoFar)
	}, core.Prepend())
}

// PermissionAsk is the payload of [PermissionRequest]: the question the
// registry is about to put to the approval service.
type PermissionAsk struct {
	// Request is what the approval service would be asked.
	Request ApprovalRequest
	// Soft is true when only the permission mode's default asks (no rule,
	// guard or other vote made the ask): what a PreToolUse hook's allow
	// could have lifted. A listener should grant only soft asks.
	Soft bool
}

// PermissionVerdict is what [PermissionRequest] listeners answer. The zero
// value decides nothing: the approval service is asked.
type PermissionVerdict struct {
	// Deny rejects the call without asking, with Reason for the model.
	Deny bool
	// Allow grants the call without asking (honoured only for a Soft ask;
	// Deny wins over it).
	Allow bool
	// Reason explains a deny.
	Reason string
}

// PermissionRequest is run by the registry, to the call's scope, when a
// call needs approval, before the approval service asks anyone (Claude
// Code's PermissionRequest hook event): a listener may answer for the
// person. Listeners should call next and keep its Deny. An error fails the
// call closed.
var PermissionRequest = core.NewWaterfallEvent[PermissionAsk, PermissionVerdict]("tools/permission-request")

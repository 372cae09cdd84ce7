package tools

import "fmt"

// DecisionKind is a pre-execute verdict. The constants are ordered by
// precedence: when decisions merge, the larger kind wins (deny > cancel > ask >
// allow).
type DecisionKind uint8

const (
	// DecisionAllow lets the call proceed to the guards. It is the zero value.
	DecisionAllow DecisionKind = iota
	// DecisionAsk asks the approval service; only a grant proceeds to the guards.
	DecisionAsk
	// DecisionCancel ends the call as ABORTED_BEFORE_DISPATCH (not a denial).
	DecisionCancel
	// DecisionDeny ends the call with "Error: <reason>".
	DecisionDeny
)

// String returns "allow", "ask", "cancel" or "deny".
func (k DecisionKind) String() string {
	switch k {
	case DecisionAllow:
		return "allow"
	case DecisionAsk:
		return "ask"
	case DecisionCancel:
		return "cancel"
	case DecisionDeny:
		return "deny"
	}
	return fmt.Sprintf("DecisionKind(%d)", uint8(k))
}

// Decision is the result of the PreExecute waterfall, and of one
// OnPreExecute vote.
//
// Three fields matter only in votes (OnPreExecute), where the registry merges
// them: Soft, Approve and Arguments. A soft ask or deny is one no rule made
// (a permission mode's default answer); an Approve vote (an explicit
// approval, such as a PreToolUse hook's permissionDecision "allow") lifts
// every soft vote, but never a hard ask, a deny, a cancel or a guard. So
// deny > cancel > ask > allow still holds for everything a rule decides.
type Decision struct {
	Kind DecisionKind
	// Reason is the denial reason (deny) or the question (ask).
	Reason string
	// Info is copied to the denied result's error info (deny only).
	Info *ErrorInfo
	// DisplayReason is a user-facing text for the approval prompt (ask only).
	DisplayReason string
	// Soft marks an ask or deny that no rule made, only a default (the
	// permission mode's answer for a call no rule covers, or its denial
	// when nobody can answer that ask): an Approve vote lifts it.
	Soft bool
	// Approve marks an allow vote as an explicit approval that lifts the
	// soft asks and denies of other votes (a PreToolUse hook's "allow").
	Approve bool
	// Arguments, when not empty, is a vote's replacement of the call's
	// argument JSON (a PreToolUse hook's updatedInput). The registry
	// validates it against the tool's schema (INVALID_ARGS when it does not
	// fit), then runs every pre-execute vote and listener again on the new
	// arguments (Execution.Rechecking is true meanwhile; the vote that
	// rewrote should answer Allow then: its first decision, without the
	// rewrite, is merged with the new votes) and the guards, so a rewrite
	// can never smuggle a call that policy denies. Only votes may rewrite;
	// two votes with different rewrites deny the call, and so does a
	// rewrite made during the re-check.
	Arguments string
	// AlwaysRules are the rules an "always" answer adds (ask only); copied to
	// ApprovalRequest.AlwaysRules.
	AlwaysRules []string
}

// Allow returns the allow decision.
func Allow() Decision { return Decision{} }

// Deny returns a deny decision with a reason shown to the model.
func Deny(reason string) Decision { return Decision{Kind: DecisionDeny, Reason: reason} }

// DenyWith returns a deny decision carrying error info for the result.
func DenyWith(reason string, info *ErrorInfo) Decision {
	return Decision{Kind: DecisionDeny, Reason: reason, Info: info}
}

// Ask returns an ask decision; reason may be empty.
func Ask(reason string) Decision { return Decision{Kind: DecisionAsk, Reason: reason} }

// Cancel returns the cancel decision.
func Cancel() Decision { return Decision{Kind: DecisionCancel} }

// Merge returns the stronger of a and b (deny > cancel > ask > allow); on a tie
// it keeps a. It does not look at Soft or Approve: the registry lifts soft
// votes when it merges the votes of one call.
func Merge(a, b Decision) Decision {
	if b.Kind > a.Kind {
		return b
	}
	return a
}

// PostKind is the kind of a post-execute decision.
type PostKind uint8

const (
	// PostAccept keeps the result, optionally replacing its content or value.
	PostAccept PostKind = iota
	// PostBlock turns the result into a valueless failure whose content is Feedback.
	PostBlock
)

// String returns "accept" or "block".
func (k PostKind) String() string {
	switch k {
	case PostAccept:
		return "accept"
	case PostBlock:
		return "block"
	}
	return fmt.Sprintf("PostKind(%d)", uint8(k))
}

// PostDecision is the result of the PostExecute waterfall (dsh A10).
//
//   - Accept with Content: replaces the content only (value and meta kept).
//   - Accept with ReplaceValue: success only; the value is converted to the
//     tool's Out type (raw tools: validated against the output schema),
//     re-rendered and its meta recomputed.
//   - Both at once is an error result.
//   - Block: a failure whose content is Feedback; its message is the feedback
//     text ("tool result blocked by post-execute policy" when empty); the body's
//     deferred contexts are dropped, only the block's own are kept.
//
// AdditionalContexts are appended after the result's existing contexts.
type PostDecision struct {
	Kind               PostKind
	Content            []Content
	Value              any
	ReplaceValue       bool
	Feedback           []Content
	AdditionalContexts []string
}

// Accept returns the default post-execute decision: keep the result.
func Accept() PostDecision { return PostDecision{} }

// ReplaceContent returns an accept decision replacing the model-facing content.
func ReplaceContent(content ...Content) PostDecision {
	if content == nil {
		content = []Content{}
	}
	return PostDecision{Content: content}
}

// ReplaceValueWith returns an accept decision replacing the canonical value.
func ReplaceValueWith(value any) PostDecision { return PostDecision{Value: value, ReplaceValue: true} }

// Block returns a block decision with the given feedback.
func Block(feedback ...Content) PostDecision {
	return PostDecision{Kind: PostBlock, Feedback: feedback}
}

// WithContexts returns d with messages appended to its AdditionalContexts.
func (d PostDecision) WithContexts(messages ...string) PostDecision {
	d.AdditionalContexts = append(append([]string(nil), d.AdditionalContexts...), messages...)
	return d
}

// ExecutionMode says whether a call's body may overlap other bodies.
type ExecutionMode uint8

const (
	// Exclusive bodies run alone: the scheduler drains the pool first.
	Exclusive ExecutionMode = iota
	// Parallel bodies overlap other parallel bodies.
	Parallel
)

// String returns "exclusive" or "parallel".
func (m ExecutionMode) String() string {
	if m == Parallel {
		return "parallel"
	}
	return "exclusive"
}

package tools

import (
	"context"
	"fmt"

	"github.com/dshgo/harness/core"
)

// Approver answers "may this call run?" for pre-execute ask decisions. The
// permission plugin provides it under ApprovalKey; the registry looks it up at
// call time (core.Lookup), so it is optional: without it an ask is a denial.
type Approver interface {
	// Ask blocks until the user (or a policy) answers or ctx ends. An error
	// fails the call closed (an error result).
	Ask(ctx context.Context, req ApprovalRequest) (ApprovalOutcome, error)
}

// ApprovalKey is the service key of the approval service ("approval").
var ApprovalKey = core.NewKey[Approver]("approval")

// Answerer puts one approval request to whoever can answer it.
type Answerer interface {
	// Answer blocks until an answer or ctx ends (then ApprovalCancelled).
	Answer(ctx context.Context, req ApprovalRequest) (ApprovalOutcome, error)
}

// DetailedAnswerer is an Answerer that can also return the user's words: a
// rejection's Reason goes back to the model as the denied result's reason
// ("no, and tell the model why"). The service prefers AnswerDetailed when an
// answerer implements it.
type DetailedAnswerer interface {
	Answerer
	// AnswerDetailed is Answer with the user's reason.
	AnswerDetailed(ctx context.Context, req ApprovalRequest) (ApprovalAnswer, error)
}

// AnswererKey is an optional service ("approvalAnswerer"): when a plugin
// provides it (a chat UI, an IDE bridge, the CLI), the approval service (plugins/approval) puts
// its questions to that answerer instead of the configured one. It is looked
// up per question, so it may come and go at any time.
var AnswererKey = core.NewKey[Answerer]("approvalAnswerer")

// ApprovalRequest describes the call awaiting approval.
type ApprovalRequest struct {
	Scope         *core.ScopeID // the agent scope; nil for unscoped calls (e.g. `harness tool`)
	Tool          string
	CallID        string
	Arguments     string // validated argument JSON
	Reason        string // the ask decision's reason
	DisplayReason string
	// AlwaysRules are the exact rules an ApprovalAllowedAlways answer adds to
	// the session's allow list (the permission plugin's suggestion, e.g.
	// "bash(go test *)"), so a front end can show what "always" means. Empty:
	// an "always" answer grants only calls identical to this one.
	AlwaysRules []string
	// Labels, when set, say what each answer means for this question, for
	// front ends to show instead of the generic ones: a plan approval
	// (exit_plan_mode) names the permission mode each "yes" switches to.
	Labels *ApprovalLabels
}

// ApprovalLabels are a question's own words for its answers. An empty
// field keeps the front end's generic label.
type ApprovalLabels struct {
	// Title replaces "Allow TOOL?".
	Title string `json:"title,omitempty"`
	// Once, Always, No and NoWhy label ApprovalAllowedOnce,
	// ApprovalAllowedAlways, ApprovalRejected and a rejection with the
	// person's reason.
	Once   string `json:"once,omitempty"`
	Always string `json:"always,omitempty"`
	No     string `json:"no,omitempty"`
	NoWhy  string `json:"noWhy,omitempty"`
}

// ApprovalAnswer is an answer with the user's words: Reason (optional, for
// ApprovalRejected) goes back to the model as the denied result's reason.
type ApprovalAnswer struct {
	Outcome ApprovalOutcome
	Reason  string
}

// DetailedApprover is an Approver that can also return the user's reason. The
// registry uses AskDetailed when the approval service implements it; Ask
// stays the answer without a reason (backward compatible).
type DetailedApprover interface {
	Approver
	// AskDetailed is Ask returning the answer with its reason.
	AskDetailed(ctx context.Context, req ApprovalRequest) (ApprovalAnswer, error)
}

// ApprovalOutcome is the answer to an approval request.
type ApprovalOutcome uint8

const (
	// ApprovalUnavailable: no one can answer (no terminal, headless).
	ApprovalUnavailable ApprovalOutcome = iota
	// ApprovalAllowedOnce grants this call; guards still apply.
	ApprovalAllowedOnce
	// ApprovalAllowedAlways grants this call and, at the approver's discretion,
	// similar ones for the session; guards still apply.
	ApprovalAllowedAlways
	// ApprovalRejected denies the call.
	ApprovalRejected
	// ApprovalCancelled denies the call (ABORTED_BEFORE_DISPATCH if the caller
	// was cancelled too).
	ApprovalCancelled
)

// String returns the dsh spelling: "unavailable", "allowed-once",
// "allowed-always", "rejected", "cancelled".
func (o ApprovalOutcome) String() string {
	switch o {
	case ApprovalUnavailable:
		return "unavailable"
	case ApprovalAllowedOnce:
		return "allowed-once"
	case ApprovalAllowedAlways:
		return "allowed-always"
	case ApprovalRejected:
		return "rejected"
	case ApprovalCancelled:
		return "cancelled"
	}
	return fmt.Sprintf("ApprovalOutcome(%d)", uint8(o))
}

package subagent

import (
	"context"
	"slices"
	"time"

	"github.com/dshgo/harness/core"
)

// Capability is something a provider can honour when it starts a child.
type Capability string

// Capabilities a provider may advertise.
const (
	// CapContinuable: the child keeps its session after it settles and
	// takes further messages ([Service.Send]).
	CapContinuable Capability = "continuable"
	// CapInterrupt: a running turn can be interrupted.
	CapInterrupt Capability = "interrupt"
	// CapResume: a stored child can be reopened after the process that
	// started it has gone (implies the provider implements [Resumer]).
	CapResume Capability = "resume"
	// CapFork: the child starts from a copy of the parent's history.
	CapFork Capability = "fork"
	// CapTools: the child's tool set can be restricted (Request.Tools).
	CapTools Capability = "tools"
	// CapModel: the child's model route can be chosen (Request.Model).
	CapModel Capability = "model"
	// CapPersona: the child can be given its own persona (Request.Persona).
	CapPersona Capability = "persona"
)

// Parent identifies the session a child is started for.
type Parent struct {
	// SessionID is the parent's session id (required).
	SessionID string
	// Scope is the parent's scope; a provider that runs the child in this
	// process makes the child's scope a descendant of it, so the parent's
	// scoped listeners and restrictions apply to the child too.
	Scope *core.ScopeID
	// Depth is the parent's own depth: 0 for a top-level session.
	Depth int
	// Cwd is the parent's working directory (the child's default).
	Cwd string
}

// Request describes a child to start.
type Request struct {
	Parent Parent
	// Description is a short label (3-5 words) for listings and logs.
	Description string
	// Prompt is the child's first message (required).
	Prompt string
	// Agent names the agent definition the fields came from ("" for none).
	Agent string
	// Persona replaces the deployment persona for this child alone
	// (needs [CapPersona]).
	Persona string
	// Model is the child's model route (needs [CapModel]); "" inherits the
	// parent's.
	Model string
	// Tools is an allow-list of tool names or globs (needs [CapTools]); nil
	// keeps every tool the parent has. Delegation tools are only ever
	// available while the child's depth is below the service's maxDepth.
	Tools []string
	// Continuable keeps the child's session after it settles (needs
	// [CapContinuable]).
	Continuable bool
	// Fork starts the child from a copy of the parent's history (needs
	// [CapFork]).
	Fork bool
}

// Needs returns the capabilities r requires, in a fixed order.
func (r Request) Needs() []Capability {
	var need []Capability
	if r.Continuable {
		need = append(need, CapContinuable)
	}
	if r.Fork {
		need = append(need, CapFork)
	}
	if r.Tools != nil {
		need = append(need, CapTools)
	}
	if r.Model != "" {
		need = append(need, CapModel)
	}
	if r.Persona != "" {
		need = append(need, CapPersona)
	}
	return need
}

// Status is how a child's turn settled.
type Status string

// Statuses of a settled turn.
const (
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	StatusAborted   Status = "aborted"
)

// Usage is the token usage of a child's turn, as its provider reports it.
type Usage struct {
	PromptTokens     int64 `json:"promptTokens"`
	CompletionTokens int64 `json:"completionTokens"`
	TotalTokens      int64 `json:"totalTokens"`
}

// Add returns u + v.
func (u Usage) Add(v Usage) Usage {
	return Usage{u.PromptTokens + v.PromptTokens, u.CompletionTokens + v.CompletionTokens, u.TotalTokens + v.TotalTokens}
}

// Outcome is one settled turn of a child.
type Outcome struct {
	// Text is the child's final answer.
	Text string `json:"text"`
	// Status says how the turn ended; Error why, when not completed.
	Status Status `json:"status"`
	Error  string `json:"error,omitempty"`
	// Usage of the turn (the child's own model calls and its children's).
	Usage Usage `json:"usage"`
	// Steps counts the turn's model calls.
	Steps int `json:"steps"`
}

// Child is a started child as its provider runs it. The service calls Turn
// at most once at a time and Close once.
type Child interface {
	// ID is the child's id: its session id.
	ID() string
	// Turn runs one turn with message until it settles. Cancelling ctx
	// interrupts it: it then returns promptly with StatusAborted, having
	// stopped everything the turn started.
	Turn(ctx context.Context, message string) Outcome
	// Close releases the child (its stored session stays).
	Close(ctx context.Context) error
}

// Provider starts children. Implementations must be safe for concurrent use.
type Provider interface {
	// Capabilities lists what Start honours.
	Capabilities() []Capability
	// Start creates the child (its session) for req without running it.
	// The service has checked the capabilities, the depth and the prompt.
	Start(ctx context.Context, req Request) (Child, error)
}

// Info describes a child, live or stored.
type Info struct {
	ID          string    `json:"id"`
	Parent      string    `json:"parent"`
	Provider    string    `json:"provider"`
	Description string    `json:"description,omitempty"`
	Agent       string    `json:"agent,omitempty"`
	Depth       int       `json:"depth"`
	Live        bool      `json:"live"`
	Running     bool      `json:"running"`
	Continuable bool      `json:"continuable"`
	Created     time.Time `json:"created"`
	Last        *Outcome  `json:"last,omitempty"`
}

// Resumer is implemented by providers with [CapResume]: they can find and
// reopen a stored child.
type Resumer interface {
	// Lookup returns the stored child's Info (Parent and Depth at least);
	// an error with [CodeUnknownAgent] when none is stored under id.
	Lookup(ctx context.Context, id string) (Info, error)
	// Resume reopens the stored child for another turn.
	Resume(ctx context.Context, id string, parent Parent) (Child, error)
	// List returns the stored children of parent, newest first.
	List(ctx context.Context, parent string) ([]Info, error)
}

func has(caps []Capability, c Capability) bool { return slices.Contains(caps, c) }

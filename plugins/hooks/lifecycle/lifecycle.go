// Package lifecycle defines the agent-loop events that session-level policy
// listens to: session start, user prompt submission, and the end of a turn.
// The agent loop fires them; the hooks plugin (and any native plugin) listens.
// The package depends only on core, so the agent need not import a policy
// plugin to fire them.
//
// Each event is a waterfall whose result is a [Decision]. A listener should
// call next and fold its own answer into the downstream decision with
// [Decision.Merge], so that no listener's block or context is lost whatever
// the registration order. The agent passes an inner function returning the
// zero Decision:
//
//	d, err := lifecycle.UserPromptSubmit.Run(ctx, c.To(session),
//		lifecycle.Prompt{Session: info, Prompt: text}, lifecycle.Pass[lifecycle.Prompt])
//	if err != nil || d.Block { /* reject the prompt with d.Reason (or err) */ }
//	// append d.AdditionalContext to the prompt as plugin-sourced context
//
// The contract mirrors Claude Code's SessionStart, UserPromptSubmit and Stop
// hook events.
package lifecycle

import (
	"context"
	"strings"

	"github.com/dshgo/harness/core"
)

// Session identifies the session an event belongs to.
type Session struct {
	// ID is the session id.
	ID string
	// Cwd is the session's working directory.
	Cwd string
	// TranscriptPath is where the session log lives, or "".
	TranscriptPath string
}

// Start is the payload of [SessionStart].
type Start struct {
	Session Session
	// Source says why the session starts: "startup", "resume", "clear" or "compact".
	Source string
}

// Prompt is the payload of [UserPromptSubmit].
type Prompt struct {
	Session Session
	// Prompt is the user's text, before it reaches the model.
	Prompt string
}

// Stopping is the payload of [Stop].
type Stopping struct {
	Session Session
	// StopHookActive is true when the turn already continued because a Stop
	// listener blocked; listeners use it to avoid keeping the agent going forever.
	StopHookActive bool
}

// Decision is what listeners answer.
type Decision struct {
	// Block rejects the prompt (UserPromptSubmit) or keeps the turn going
	// (Stop, with Reason as the next instruction to the model). SessionStart
	// ignores it.
	Block bool
	// Reason explains a block; for Stop it is what the model is told to do next.
	Reason string
	// AdditionalContext is text to add to the conversation as plugin-sourced
	// context, in listener order.
	AdditionalContext []string
}

// Merge folds other into d: a block from either side wins (reasons joined
// by a blank line) and contexts accumulate, d's first.
func (d Decision) Merge(other Decision) Decision {
	out := Decision{Block: d.Block || other.Block}
	var reasons []string
	for _, x := range []Decision{d, other} {
		if x.Block && x.Reason != "" {
			reasons = append(reasons, x.Reason)
		}
	}
	out.Reason = strings.Join(reasons, "\n\n")
	out.AdditionalContext = append(append([]string(nil), d.AdditionalContext...), other.AdditionalContext...)
	return out
}

// Pass is the inner function for a dispatch: nothing blocks, nothing is added.
func Pass[P any](context.Context, P) (Decision, error) { return Decision{}, nil }

// The events. Names follow the agent's event namespace.
var (
	// SessionStart fires when a session starts or resumes, before the first step.
	SessionStart = core.NewWaterfallEvent[Start, Decision]("agent/session-start")
	// UserPromptSubmit fires when a user prompt is submitted, before the model sees it.
	UserPromptSubmit = core.NewWaterfallEvent[Prompt, Decision]("agent/user-prompt-submit")
	// Stop fires when the model ended its turn without tool calls, before the loop stops.
	Stop = core.NewWaterfallEvent[Stopping, Decision]("agent/stop")
)

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
// hook events; [SessionEnd] (Claude Code's SessionEnd) is a plain
// notification.
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
	// TranscriptPath is the session's transcript in Claude Code's JSONL
	// format (one message per line: user, assistant with content blocks,
	// tool results), kept current as the session runs, so hook scripts that
	// read Claude's transcript work; "" when there is none.
	TranscriptPath string
	// Scope is the session's scope (the target of its events), or nil.
	Scope *core.ScopeID
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
	// Turn is the 1-based number of the user turn the prompt starts (as the
	// session log numbers turns; 0 when unknown).
	Turn int
}

// End is the payload of [SessionEnd].
type End struct {
	Session Session
}

// Stopping is the payload of [Stop].
type Stopping struct {
	Session Session
	// StopHookActive is true when the turn already continued because a Stop
	// listener blocked; listeners use it to avoid keeping the agent going forever.
	StopHookActive bool
	// LastAssistantMessage is the text of the assistant's final message of
	// the turn (Claude Code's last_assistant_message).
	LastAssistantMessage string
}

// Compacting is the payload of [PreCompact].
type Compacting struct {
	Session Session
	// Trigger is "manual" (/compact, harness compact, run --compact) or
	// "auto" (the context window's threshold, or a CONTEXT_LENGTH error).
	Trigger string
	// CustomInstructions are the user's instructions for the summary
	// (`/compact focus on X`), empty for auto.
	CustomInstructions string
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
	// Halt ends the session's run after this event (Claude Code's
	// `continue: false`), with HaltReason shown to the user; for Stop it
	// wins over Block.
	Halt bool
	// HaltReason says why (Claude Code's stopReason); may be empty.
	HaltReason string
	// Env holds variables for the later shell commands of the session
	// (SessionStart only: what hooks wrote to CLAUDE_ENV_FILE), credentials
	// already dropped. When listeners disagree, the later one wins.
	Env map[string]string
}

// Merge folds other into d: a block from either side wins (reasons joined
// by a blank line) and contexts accumulate, d's first.
func (d Decision) Merge(other Decision) Decision {
	out := Decision{Block: d.Block || other.Block, Halt: d.Halt || other.Halt}
	out.HaltReason = strings.TrimSpace(d.HaltReason + "\n\n" + other.HaltReason)
	var reasons []string
	for _, x := range []Decision{d, other} {
		if x.Block && x.Reason != "" {
			reasons = append(reasons, x.Reason)
		}
	}
	out.Reason = strings.Join(reasons, "\n\n")
	out.AdditionalContext = append(append([]string(nil), d.AdditionalContext...), other.AdditionalContext...)
	if len(d.Env)+len(other.Env) > 0 {
		out.Env = make(map[string]string, len(d.Env)+len(other.Env))
		for _, m := range []map[string]string{d.Env, other.Env} {
			for k, v := range m {
				out.Env[k] = v
			}
		}
	}
	return out
}

// Pass is the inner function for a dispatch: nothing blocks, nothing is added.
func Pass[P any](context.Context, P) (Decision, error) { return Decision{}, nil }

// Notice is the payload of [SystemMessage].
type Notice struct {
	// Source names who speaks, e.g. "hooks:PreToolUse".
	Source string
	// Text is the message for the user.
	Text string
}

// SystemMessage carries a message for the user (a hook's systemMessage),
// dispatched to the session's scope; the agent shows it as a notice (stderr
// in text mode, an event in stream-json). Listener failures are contained.
var SystemMessage = core.NewEmitEvent[Notice]("agent/system-message")

// The events. Names follow the agent's event namespace.
var (
	// SessionStart fires when a session starts or resumes, before the first step.
	SessionStart = core.NewWaterfallEvent[Start, Decision]("agent/session-start")
	// UserPromptSubmit fires when a user prompt is submitted, before the model sees it.
	UserPromptSubmit = core.NewWaterfallEvent[Prompt, Decision]("agent/user-prompt-submit")
	// Stop fires when the model ended its turn without tool calls, before the loop stops.
	Stop = core.NewWaterfallEvent[Stopping, Decision]("agent/stop")
	// PreCompact fires before a compaction replaces older history by a
	// summary. A block cancels a manual compaction; an automatic one goes
	// on (the context window leaves no choice). Contexts are ignored.
	PreCompact = core.NewWaterfallEvent[Compacting, Decision]("agent/pre-compact")
	// SessionEnd fires once when a session closes, before its scope is
	// disposed, dispatched to the session's scope: what a plugin started
	// for the session (a background shell) ends with it. Listeners run
	// synchronously and should return promptly; failures are contained.
	SessionEnd = core.NewEmitEvent[End]("agent/session-end")
)

// claudeToolNames maps the harness's built-in tool names to Claude Code's.
var claudeToolNames = map[string]string{
	"bash": "Bash", "read": "Read", "write": "Write", "edit": "Edit", "grep": "Grep", "glob": "Glob",
	"todo_write": "TodoWrite", "task": "Task", "bash_output": "BashOutput", "kill_shell": "KillShell",
}

// ClaudeToolName returns the name Claude Code gives the harness tool name:
// Bash, Read, Write, Edit, Grep, Glob, TodoWrite, Task, BashOutput and
// KillShell for the built-in tools; any other
// name (MCP tools are already mcp__<server>__<tool>) unchanged. Hook payloads
// and the Claude-format transcript use it.
func ClaudeToolName(name string) string {
	if n, ok := claudeToolNames[name]; ok {
		return n
	}
	return name
}

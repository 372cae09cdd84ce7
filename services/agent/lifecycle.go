package agent

import (
	"context"

	"github.com/dshgo/harness/services/agent/lifecycle"
)

// Sources of user messages added by lifecycle listeners.
const (
	SourceSessionStart     = "hooks:SessionStart"
	SourceUserPromptSubmit = "hooks:UserPromptSubmit"
	SourceStop             = "hooks:Stop"
)

func (ss *Session) lifecycleSession() lifecycle.Session {
	return lifecycle.Session{ID: ss.id, Cwd: ss.opts.Cwd, TranscriptPath: ss.claude.path, Scope: ss.scope.ID()}
}

// sessionStart fires SessionStart; its contexts are added before the next
// prompt, and its variables (CLAUDE_ENV_FILE) reach the session's later
// shell commands. A failing listener is logged and ignored (SessionStart
// cannot block).
func (ss *Session) sessionStart(ctx context.Context, source string) ([]sourced, map[string]string) {
	d, err := lifecycle.SessionStart.Run(ctx, ss.svc.c.To(ss.scope.ID()), lifecycle.Start{Session: ss.lifecycleSession(), Source: source}, lifecycle.Pass[lifecycle.Start])
	if err != nil {
		ss.svc.c.Logger().Warn("SessionStart listener failed", "session", ss.id, "err", err)
		return nil, nil
	}
	return contexts(SourceSessionStart, d.AdditionalContext), d.Env
}

// promptSubmit fires UserPromptSubmit: a block or a failed listener
// rejects the prompt (fail closed).
func (ss *Session) promptSubmit(ctx context.Context, prompt string, turn int) (blocked bool, reason string, added []sourced) {
	d, err := lifecycle.UserPromptSubmit.Run(ctx, ss.svc.c.To(ss.scope.ID()), lifecycle.Prompt{Session: ss.lifecycleSession(), Prompt: prompt, Turn: turn}, lifecycle.Pass[lifecycle.Prompt])
	if err != nil {
		return true, err.Error(), nil
	}
	if d.Block {
		return true, d.Reason, nil
	}
	return false, "", contexts(SourceUserPromptSubmit, d.AdditionalContext)
}

// stop fires Stop: a block keeps the turn going with the reason as the
// next user message, as often as listeners block (StopHookActive tells them
// the turn already continued; MaxSteps bounds the turn); a halt
// (`continue: false`) ends it whatever the blocks.
func (ss *Session) stop(ctx context.Context, active bool, last string) (cont bool, reason string, added []sourced) {
	d, err := lifecycle.Stop.Run(ctx, ss.svc.c.To(ss.scope.ID()),
		lifecycle.Stopping{Session: ss.lifecycleSession(), StopHookActive: active, LastAssistantMessage: last}, lifecycle.Pass[lifecycle.Stopping])
	if err != nil {
		ss.svc.c.Logger().Warn("Stop listener failed", "session", ss.id, "err", err)
		return false, "", nil
	}
	return d.Block && d.Reason != "" && !d.Halt, d.Reason, contexts(SourceStop, d.AdditionalContext)
}

func contexts(source string, texts []string) []sourced {
	var out []sourced
	for _, t := range texts {
		if t != "" {
			out = append(out, sourced{source, t})
		}
	}
	return out
}

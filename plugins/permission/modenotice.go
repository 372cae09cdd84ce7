package permission

import (
	"context"
	"weak"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/agent/lifecycle"
)

// A person may switch a session's permission mode between prompts (the
// terminal UI's Shift+Tab; an approved plan). The model learns it with its
// next prompt: a UserPromptSubmit listener adds one sentence of context when
// the mode in force differs from the one the session's previous prompt ran
// under (at the first prompt: from the configured mode, which the system
// prompt and the tool list already reflect). The request stays append-only:
// nothing earlier in the conversation is rewritten.

// modeNotices says, per mode, what the model may now do.
var modeNotices = map[string]string{
	"default":           "The person switched the permission mode to default: edits and commands run again, and each asks for approval where the rules say so.",
	"acceptEdits":       "The person switched the permission mode to acceptEdits: file edits in the workspace now run without asking; commands ask where the rules say so.",
	"plan":              "The person switched the permission mode to plan: only read-only tools run now and no file may be changed. Research, then answer with a plan in text; the person switches the mode back when they want it carried out.",
	"bypassPermissions": "The person switched the permission mode to bypassPermissions: tools run without asking; deny rules still hold.",
	"dontAsk":           "The person switched the permission mode to dontAsk: a call that would need approval is denied instead of asking.",
}

// watchModes registers the listener that tells the model of a switched mode.
func (p *plugin) watchModes(c *core.Context) error {
	return core.On(c, lifecycle.UserPromptSubmit, func(ctx context.Context, pr lifecycle.Prompt, next core.Next[lifecycle.Prompt, lifecycle.Decision]) (lifecycle.Decision, error) {
		d, err := next(ctx, pr)
		if err != nil || d.Block {
			return d, err
		}
		if note := p.modeChange(pr.Session.Scope); note != "" {
			d = d.Merge(lifecycle.Decision{AdditionalContext: []string{note}})
		}
		return d, nil
	})
}

// modeChange records the mode a prompt of scope runs under and returns the
// notice for the model when it differs from the previous prompt's (or, at
// the first prompt, from the configured mode); "" otherwise.
func (p *plugin) modeChange(scope *core.ScopeID) string {
	if scope == nil {
		return ""
	}
	cur := p.PermissionMode(scope)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.told == nil {
		p.told = map[weak.Pointer[core.ScopeID]]string{}
	}
	prev, seen := p.told[weak.Make(scope)]
	if !seen {
		prev = string(p.policy.Mode())
		if prev == string(ModeBypass) {
			prev = "bypassPermissions"
		}
		for k := range p.told {
			if k.Value() == nil {
				delete(p.told, k)
			}
		}
	}
	p.told[weak.Make(scope)] = cur
	if prev == cur {
		return ""
	}
	return modeNotices[cur]
}

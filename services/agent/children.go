package agent

import (
	"context"

	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/tools"
)

type turnKey struct{}

// withTurn returns ctx carrying the running turn, for the turn's tool bodies.
func withTurn(ctx context.Context, t *turn) context.Context {
	return context.WithValue(ctx, turnKey{}, t)
}

// FromContext returns the session whose tool call ctx belongs to (the ctx a
// tool body receives from the agent loop), or false outside a turn.
func FromContext(ctx context.Context) (*Session, bool) {
	t, ok := ctx.Value(turnKey{}).(*turn)
	if !ok {
		return nil, false
	}
	return t.ss, true
}

// AddChildUsage rolls the usage u of a subagent up into the result of the
// turn whose tool call ctx belongs to: [Result.Usage] includes it and
// [Result.SubagentUsage] sums it. It reports false outside a turn. Safe for
// concurrent tool bodies. The session's own total ([Session.Usage]) counts
// only its own model calls; its budget's spend ([Budget]) counts u too.
func AddChildUsage(ctx context.Context, u llm.Usage) bool {
	t, ok := ctx.Value(turnKey{}).(*turn)
	if !ok {
		return false
	}
	t.childMu.Lock()
	defer t.childMu.Unlock()
	if t.children == nil {
		t.children = &llm.Usage{}
	}
	*t.children = t.children.Add(u)
	t.ss.spend(u)
	return true
}

// ForkPendingResult is the tool result a forked session records for each
// tool call of its source that had no result yet when it was forked (the
// call that started the fork, a subagent, among them): a model request needs
// a result for every call.
const ForkPendingResult = "[still running when this session was forked from it]"

// trimUnresolved completes recs (a session's records) for a fork: the tool
// calls of the last assistant message that have no result yet get a
// [ForkPendingResult] result, so the copy ends with a complete step.
func trimUnresolved(recs []Record) []Record {
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		if r.Type != RecordAssistant || r.Message == nil || len(r.Message.ToolCalls) == 0 {
			continue
		}
		answered := map[string]bool{}
		for _, later := range recs[i+1:] {
			if later.Type == RecordToolResult {
				answered[later.CallID] = true
			}
		}
		out := recs
		for _, tc := range r.Message.ToolCalls {
			if !answered[tc.ID] {
				m := &llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: ForkPendingResult}
				out = append(out[:len(out):len(out)], Record{Type: RecordToolResult, Turn: r.Turn, Step: r.Step, Message: m, CallID: tc.ID, Name: tc.Name,
					Content: []tools.Content{tools.Text(ForkPendingResult)}})
			}
		}
		return out
	}
	return recs
}

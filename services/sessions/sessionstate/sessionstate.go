// Package sessionstate carries a session's keyed state store in a tool
// call's context.Context, so a tool plugin (tool-todo) can keep per-session
// state that the session log journals and a resume restores, without
// importing the agent.
//
// The agent loop wraps the context of every tool call with With(ctx, the
// session); a tool reads it with From. Each SetState is an ordinary
// appended record of the session log (a "state" record), so it works with
// any session store; replaying the log restores the last value of each key.
package sessionstate

import (
	"context"
	"encoding/json"
)

// Store is a session's keyed state.
type Store interface {
	// State returns the current value of key (nil when never set).
	State(key string) json.RawMessage
	// SetState replaces the value of key, journals it in the session log
	// and reports it to the session's observers. value must be valid JSON.
	SetState(key string, value json.RawMessage) error
}

type ctxKey struct{}

// With returns a copy of ctx carrying s. A nil s leaves ctx unchanged.
func With(ctx context.Context, s Store) context.Context {
	if s == nil {
		return ctx
	}
	return context.WithValue(ctx, ctxKey{}, s)
}

// From returns the store carried by ctx, if any.
func From(ctx context.Context) (Store, bool) {
	s, ok := ctx.Value(ctxKey{}).(Store)
	return s, ok
}

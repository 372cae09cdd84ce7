package core

import (
	"context"
	"fmt"
	"sync"
)

// ScopeID names a scope, for example one agent session, with an optional
// parent fixed at creation (so chains never cycle). IDs compare by pointer.
type ScopeID struct {
	label  string
	parent *ScopeID
}

// NewScopeID returns a new scope id with the given label (for logs) and
// parent (nil for a top-level scope).
func NewScopeID(label string, parent *ScopeID) *ScopeID {
	return &ScopeID{label: label, parent: parent}
}

// Label returns the id's label.
func (id *ScopeID) Label() string {
	if id == nil {
		return ""
	}
	return id.label
}

// Parent returns the parent id (nil at the top).
func (id *ScopeID) Parent() *ScopeID {
	if id == nil {
		return nil
	}
	return id.parent
}

// Within reports whether id is anc or one of its descendants. A nil id is
// within nothing.
func (id *ScopeID) Within(anc *ScopeID) bool {
	for s := id; s != nil; s = s.parent {
		if s == anc {
			return true
		}
	}
	return false
}

// Chain returns id and its ancestors, nearest first.
func (id *ScopeID) Chain() []*ScopeID {
	var out []*ScopeID
	for s := id; s != nil; s = s.parent {
		out = append(out, s)
	}
	return out
}

// String returns the labels from the top, joined by "/".
func (id *ScopeID) String() string {
	if id == nil {
		return "<global>"
	}
	if id.parent == nil {
		return id.label
	}
	return id.parent.String() + "/" + id.label
}

// Target addresses a dispatch: a runtime and a scope in it. Listeners
// registered through a context scoped to the target's scope or one of its
// ancestors receive the dispatch, as do unscoped and [Global] listeners.
// Make one with [Context.To] or [Context.Here]; the zero Target belongs to no
// runtime (dispatching to it is an [ErrNoTarget] error, or nothing for Emit).
type Target struct {
	root  *Root
	scope *ScopeID
}

// To targets a dispatch at scope id in c's runtime (nil: only unscoped and
// Global listeners receive it).
func (c *Context) To(id *ScopeID) Target { return Target{root: c.root, scope: id} }

// Here targets a dispatch at c's own scope: c.To(c.Scope()).
func (c *Context) Here() Target { return Target{root: c.root, scope: c.scope} }

// Scope returns the scope the dispatch is targeted at (nil: unscoped).
func (t Target) Scope() *ScopeID { return t.scope }

// admits reports whether a listener registered in scope ls receives a
// dispatch to t (events flow up the scope chain, never down).
func (t Target) admits(ls *ScopeID) bool {
	return ls == nil || t.scope.Within(ls)
}

// Scope is a live scope: a child fiber of the context that created it,
// whose [Scope.Context] registers everything with the scope's id. Disposing
// the scope undoes all of it.
type Scope struct {
	id    *ScopeID
	fiber *Fiber
	ctx   *Context
	once  sync.Once
	err   error
}

var scopePlugin = Define("scope", func(*Context, struct{}) error { return nil })

// NewScope mints a scope with id under c's fiber. Its context can be used at
// once, even from inside Apply. The scope is disposed with c's fiber if not
// before. Services resolve through c's plugin: the minting plugin must
// inject what scope holders will [Use].
func NewScope(c *Context, id *ScopeID) (*Scope, error) {
	if id == nil {
		return nil, fmt.Errorf("new scope: nil id")
	}
	r := c.root
	f := r.newFiber(scopePlugin, nil, c.fiber)
	f.scopeID = id
	f.ctx.scope = id
	r.mu.Lock()
	if !c.fiber.state.accepts() || c.fiber.dispose {
		r.mu.Unlock()
		return nil, fmt.Errorf("new scope %s: %w", id, ErrInactive)
	}
	c.fiber.effects = append(c.fiber.effects, &effect{label: "scope " + id.String(), child: f})
	c.fiber.children = append(c.fiber.children, f)
	r.enqueueLocked(f)
	r.mu.Unlock()
	r.drain()
	return &Scope{id: id, fiber: f, ctx: f.ctx}, nil
}

// ID returns the scope's id.
func (s *Scope) ID() *ScopeID { return s.id }

// Context returns the scoped context.
func (s *Scope) Context() *Context { return s.ctx }

// Fiber returns the scope's fiber.
func (s *Scope) Fiber() *Fiber { return s.fiber }

// Dispose undoes everything registered through the scope, once, like
// [Fiber.Dispose]: it does not wait on the lifecycle (wait with
// s.Fiber().Await or Done). Concurrent and repeated calls share the result.
func (s *Scope) Dispose(ctx context.Context) error {
	s.once.Do(func() { s.err = s.fiber.Dispose(ctx) })
	return s.err
}

package core

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// Event is the constraint [On] uses to accept any event kind with its
// matching listener type H. It is implemented by [EmitEvent], [BailEvent]
// and [WaterfallEvent] only.
type Event[H any] interface {
	// EventName returns the event's name, for logs.
	EventName() string
	eventID() uint64
	listen(c *Context, h H, o listenOptions) error
}

// ListenOption modifies a listener registration.
type ListenOption func(*listenOptions)

type listenOptions struct{ prepend, global bool }

// Prepend puts the listener before every listener registered so far.
func Prepend() ListenOption { return func(o *listenOptions) { o.prepend = true } }

// Global makes a listener registered through a scoped context receive every
// dispatch, bypassing scope filtering.
func Global() ListenOption { return func(o *listenOptions) { o.global = true } }

// On registers h as a listener of e, as an effect of c's fiber: the listener
// is removed when the fiber unloads. Registered through a scoped context (and
// without [Global]) it receives only dispatches targeted at that scope or a
// descendant. It returns ErrInactive on an inactive context.
//
// Listener shapes by event kind:
//
//	EmitEvent[P]:         func(ctx context.Context, p P) error
//	BailEvent[P, R]:      func(ctx context.Context, p P) (r R, handled bool, err error)
//	WaterfallEvent[P, R]: func(ctx context.Context, p P, next Next[P, R]) (R, error)
func On[H any](c *Context, e Event[H], h H, opts ...ListenOption) error {
	var o listenOptions
	for _, opt := range opts {
		opt(&o)
	}
	return e.listen(c, h, o)
}

var eventIDs atomic.Uint64

// listener is one registration.
type listener[H any] struct {
	h       H
	fiber   *Fiber
	scope   *ScopeID
	global  bool
	removed atomic.Bool
}

func (l *listener[H]) admitted(t Target) bool {
	return l.global || t.admits(l.scope)
}

// listenerList is copy-on-write: dispatch loads the current slice without a
// lock, which is the snapshot taken at dispatch start.
type listenerList[H any] struct {
	mu    sync.Mutex
	items atomic.Pointer[[]*listener[H]]
}

func listenersOf[H any](r *Root, id uint64) *listenerList[H] {
	if v, ok := r.events.Load(id); ok {
		return v.(*listenerList[H])
	}
	v, _ := r.events.LoadOrStore(id, &listenerList[H]{})
	return v.(*listenerList[H])
}

func snapshot[H any](r *Root, id uint64) []*listener[H] {
	v, ok := r.events.Load(id)
	if !ok {
		return nil
	}
	p := v.(*listenerList[H]).items.Load()
	if p == nil {
		return nil
	}
	return *p
}

func register[H any](c *Context, id uint64, name string, h H, o listenOptions) error {
	r := c.root
	l := &listener[H]{h: h, fiber: c.fiber, scope: c.scope, global: o.global}
	list := listenersOf[H](r, id)
	return c.Effect("on "+name, func() (func(), error) {
		list.mu.Lock()
		var cur []*listener[H]
		if p := list.items.Load(); p != nil {
			cur = *p
		}
		next := make([]*listener[H], 0, len(cur)+1)
		if o.prepend {
			next = append(append(next, l), cur...)
		} else {
			next = append(append(next, cur...), l)
		}
		list.items.Store(&next)
		list.mu.Unlock()
		return func() {
			l.removed.Store(true)
			list.mu.Lock()
			cur := *list.items.Load()
			if i := slices.Index(cur, l); i >= 0 {
				next := slices.Delete(slices.Clone(cur), i, i+1)
				list.items.Store(&next)
			}
			list.mu.Unlock()
		}, nil
	})
}

// Listeners returns how many listeners e currently has in c's runtime
// (diagnostics and tests).
func Listeners[H any](c *Context, e Event[H]) int {
	return len(snapshot[H](c.root, e.eventID()))
}

// ---- Emit ----

// EmitEvent is an observer event: every admitted listener runs, in order;
// an error or panic in one is logged (event name, plugin) and the others
// still run. Create with [NewEmitEvent]; dispatch with [Emit].
type EmitEvent[P any] struct {
	name string
	id   uint64
}

// NewEmitEvent declares an emit event. Declare events as package variables.
func NewEmitEvent[P any](name string) *EmitEvent[P] {
	return &EmitEvent[P]{name: name, id: eventIDs.Add(1)}
}

// EventName returns the event name.
func (e *EmitEvent[P]) EventName() string { return e.name }
func (e *EmitEvent[P]) eventID() uint64   { return e.id }
func (e *EmitEvent[P]) listen(c *Context, h func(context.Context, P) error, o listenOptions) error {
	return register(c, e.id, e.name, h, o)
}

// Emit dispatches p to e's listeners admitted by t. It never fails: errors
// and panics are contained per listener and logged.
func Emit[P any](ctx context.Context, c *Context, e *EmitEvent[P], t Target, p P) {
	for _, l := range snapshot[func(context.Context, P) error](c.root, e.id) {
		if !l.admitted(t) || l.removed.Load() {
			continue
		}
		if err := callSafe(func() error { return l.h(ctx, p) }); err != nil {
			c.root.logFailure("event listener failed", l.fiber, err, "event", e.name)
		}
	}
}

// ---- Bail / Serial ----

// BailEvent is a first-answer event: listeners run in order until one
// returns handled=true (its result is the dispatch's) or an error (which
// stops the dispatch and is returned: fail closed). Create with
// [NewBailEvent]; dispatch with [Bail] (or its synonym [Serial]).
type BailEvent[P, R any] struct {
	name string
	id   uint64
}

// NewBailEvent declares a bail event.
func NewBailEvent[P, R any](name string) *BailEvent[P, R] {
	return &BailEvent[P, R]{name: name, id: eventIDs.Add(1)}
}

// EventName returns the event name.
func (e *BailEvent[P, R]) EventName() string { return e.name }
func (e *BailEvent[P, R]) eventID() uint64   { return e.id }
func (e *BailEvent[P, R]) listen(c *Context, h func(context.Context, P) (R, bool, error), o listenOptions) error {
	return register(c, e.id, e.name, h, o)
}

// Bail runs e's admitted listeners in order and returns the first handled
// result. The first error (a panic becomes a *PanicError) stops the dispatch
// and is returned. (zero, false, nil) means no listener handled p.
func Bail[P, R any](ctx context.Context, c *Context, e *BailEvent[P, R], t Target, p P) (R, bool, error) {
	var zero R
	for _, l := range snapshot[func(context.Context, P) (R, bool, error)](c.root, e.id) {
		if !l.admitted(t) || l.removed.Load() {
			continue
		}
		var (
			r       R
			handled bool
		)
		err := callSafe(func() error {
			var err error
			r, handled, err = l.h(ctx, p)
			return err
		})
		if err != nil {
			return zero, false, fmt.Errorf("event %s: plugin %q: %w", e.name, l.fiber.plugin.Name(), err)
		}
		if handled {
			return r, true, nil
		}
	}
	return zero, false, nil
}

// Serial is [Bail] under Cordis's other name: Go has no sync/async split.
func Serial[P, R any](ctx context.Context, c *Context, e *BailEvent[P, R], t Target, p P) (R, bool, error) {
	return Bail(ctx, c, e, t, p)
}

// ---- Waterfall ----

// Next continues a waterfall: it calls the next listener, or the inner
// function after the last one.
type Next[P, R any] = func(ctx context.Context, p P) (R, error)

// WaterfallEvent is a middleware event around an inner function: the first
// admitted listener is outermost; each receives next and may change the
// payload, the context or the result, call next more than once (retry), or
// not call it at all (short-circuit: later listeners and inner do not run).
// An error or panic propagates to the dispatcher and is never skipped, so a
// failing policy hook fails closed. next must not be called concurrently
// from several goroutines, and is valid only until the listener that
// received it returns (dispatch state is pooled). Create with [NewWaterfallEvent]; dispatch with
// [Waterfall].
type WaterfallEvent[P, R any] struct {
	name string
	id   uint64
	pool sync.Pool // *waterfallRun[P, R], reused across dispatches
}

// NewWaterfallEvent declares a waterfall event.
func NewWaterfallEvent[P, R any](name string) *WaterfallEvent[P, R] {
	return &WaterfallEvent[P, R]{name: name, id: eventIDs.Add(1)}
}

// EventName returns the event name.
func (e *WaterfallEvent[P, R]) EventName() string { return e.name }
func (e *WaterfallEvent[P, R]) eventID() uint64   { return e.id }
func (e *WaterfallEvent[P, R]) listen(c *Context, h func(context.Context, P, Next[P, R]) (R, error), o listenOptions) error {
	return register(c, e.id, e.name, h, o)
}

type waterfallRun[P, R any] struct {
	ev    *WaterfallEvent[P, R]
	list  []*listener[func(context.Context, P, Next[P, R]) (R, error)]
	t     Target
	inner Next[P, R]
	next  Next[P, R]
	pos   int
}

// step calls the first admitted listener at or after pos, or inner.
func (w *waterfallRun[P, R]) step(ctx context.Context, p P) (R, error) {
	saved := w.pos
	defer func() { w.pos = saved }()
	for i := saved; i < len(w.list); i++ {
		l := w.list[i]
		if !l.admitted(w.t) || l.removed.Load() {
			continue
		}
		w.pos = i + 1
		return w.call(ctx, l, p)
	}
	w.pos = len(w.list)
	if w.inner == nil {
		var zero R
		return zero, nil
	}
	return callInner(ctx, p, w.inner)
}

func (w *waterfallRun[P, R]) call(ctx context.Context, l *listener[func(context.Context, P, Next[P, R]) (R, error)], p P) (r R, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("event %s: plugin %q: %w", w.ev.name, l.fiber.plugin.Name(), recovered(v))
		}
	}()
	return l.h(ctx, p, w.next)
}

// Waterfall dispatches p through e's admitted listeners around inner (which
// may be nil: then the last next returns the zero R). It returns the
// outermost listener's result. Errors and panics (as *PanicError)
// propagate.
func Waterfall[P, R any](ctx context.Context, c *Context, e *WaterfallEvent[P, R], t Target, p P, inner Next[P, R]) (R, error) {
	list := snapshot[func(context.Context, P, Next[P, R]) (R, error)](c.root, e.id)
	if len(list) == 0 {
		if inner == nil {
			var zero R
			return zero, nil
		}
		return callInner(ctx, p, inner)
	}
	w, _ := e.pool.Get().(*waterfallRun[P, R])
	if w == nil {
		w = &waterfallRun[P, R]{ev: e}
		w.next = w.step
	}
	w.list, w.t, w.inner, w.pos = list, t, inner, 0
	r, err := w.step(ctx, p)
	w.list, w.t, w.inner = nil, Target{}, nil
	e.pool.Put(w)
	return r, err
}

func callInner[P, R any](ctx context.Context, p P, inner Next[P, R]) (r R, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = recovered(v)
		}
	}()
	return inner(ctx, p)
}

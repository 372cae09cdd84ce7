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
	snapshot(r *Root) []*listener[H]
}

// ListenOption modifies a listener registration. The interface is sealed:
// the options are the constructors of this package ([Prepend], [Global]).
type ListenOption interface{ applyListen(*listenOptions) }

type listenOptions struct{ prepend, global bool }

type listenOptionFunc func(*listenOptions)

func (f listenOptionFunc) applyListen(o *listenOptions) { f(o) }

// Prepend puts the listener before every listener registered so far.
func Prepend() ListenOption { return listenOptionFunc(func(o *listenOptions) { o.prepend = true }) }

// Global makes a listener registered through a scoped context receive every
// dispatch, bypassing scope filtering.
func Global() ListenOption { return listenOptionFunc(func(o *listenOptions) { o.global = true }) }

// On registers h as a listener of e, as an effect of c's fiber: the listener
// is removed when the fiber unloads. Registered through a scoped context (and
// without [Global]) it receives only dispatches targeted at that scope or a
// descendant. It returns ErrInactive on an inactive context.
//
// Listener shapes by event kind (a function of the wrong shape fails to
// compile with an error naming the type):
//
//	EmitEvent[P]:         EmitListener[P]         func(ctx context.Context, p P) error
//	BailEvent[P, R]:      BailListener[P, R]      func(ctx context.Context, p P) (r R, handled bool, err error)
//	WaterfallEvent[P, R]: WaterfallListener[P, R] func(ctx context.Context, p P, next Next[P, R]) (R, error)
func On[H any](c *Context, e Event[H], h H, opts ...ListenOption) error {
	var o listenOptions
	for _, opt := range opts {
		opt.applyListen(&o)
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
// lock, which is the snapshot taken at dispatch start. One exists per (root,
// event) and is never replaced, so events may cache it (see listCache).
type listenerList[H any] struct {
	mu     sync.Mutex
	items  atomic.Pointer[[]*listener[H]]
	rootID uint64
}

func (l *listenerList[H]) load() []*listener[H] {
	if p := l.items.Load(); p != nil {
		return *p
	}
	return nil
}

func listenersOf[H any](r *Root, id uint64) *listenerList[H] {
	if v, ok := r.events.Load(id); ok {
		return v.(*listenerList[H])
	}
	v, _ := r.events.LoadOrStore(id, &listenerList[H]{rootID: r.id})
	return v.(*listenerList[H])
}

// listCache is an event's one-entry cache of its listener list in the root
// it was last dispatched in, which spares the per-dispatch map lookup when a
// process has one root (the common case). It holds the list, not the root,
// so a disposed root is not kept alive by a package-level event.
type listCache[H any] struct {
	last atomic.Pointer[listenerList[H]]
}

// snapshot returns the listeners of event id in r at this instant.
func (lc *listCache[H]) snapshot(r *Root, id uint64) []*listener[H] {
	if l := lc.last.Load(); l != nil && l.rootID == r.id {
		return l.load()
	}
	l := listenersOf[H](r, id) // created if absent, so an event without listeners is cached too
	lc.last.Store(l)
	return l.load()
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
	return len(e.snapshot(c.root))
}

// ---- Emit ----

// EmitListener is the listener shape of an [EmitEvent]. A function of
// another shape passed to [On] with an emit event fails to compile with an
// error naming this type.
type EmitListener[P any] = func(ctx context.Context, p P) error

// EmitEvent is an observer event: every admitted listener runs, in order;
// an error or panic in one is logged (event name, plugin) and the others
// still run. Create with [NewEmitEvent]; dispatch with [EmitEvent.Emit].
type EmitEvent[P any] struct {
	name  string
	id    uint64
	lists listCache[EmitListener[P]]
}

// NewEmitEvent declares an emit event. Declare events as package variables.
func NewEmitEvent[P any](name string) *EmitEvent[P] {
	return &EmitEvent[P]{name: name, id: eventIDs.Add(1)}
}

// EventName returns the event name.
func (e *EmitEvent[P]) EventName() string { return e.name }
func (e *EmitEvent[P]) eventID() uint64   { return e.id }
func (e *EmitEvent[P]) snapshot(r *Root) []*listener[EmitListener[P]] {
	return e.lists.snapshot(r, e.id)
}
func (e *EmitEvent[P]) listen(c *Context, h EmitListener[P], o listenOptions) error {
	return register(c, e.id, e.name, h, o)
}

// Emit dispatches p to e's listeners admitted by t. It never fails: errors
// and panics are contained per listener and logged. The zero Target reaches
// no listener.
func (e *EmitEvent[P]) Emit(ctx context.Context, t Target, p P) {
	if t.root == nil {
		return
	}
	for _, l := range e.lists.snapshot(t.root, e.id) {
		if !l.admitted(t) || l.removed.Load() {
			continue
		}
		if err := emitCall(ctx, l.h, p); err != nil {
			t.root.logFailure("event listener failed", l.fiber, err, "event", e.name)
		}
	}
}

// emitCall calls h, converting a panic into a *PanicError.
func emitCall[P any](ctx context.Context, h func(context.Context, P) error, p P) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = recovered(v)
		}
	}()
	return h(ctx, p)
}

// ---- Bail ----

// BailListener is the listener shape of a [BailEvent]: handled=true ends
// the dispatch with r. A function of another shape passed to [On] with a
// bail event fails to compile with an error naming this type.
type BailListener[P, R any] = func(ctx context.Context, p P) (r R, handled bool, err error)

// BailEvent is a first-answer event: listeners run in order until one
// returns handled=true (its result is the dispatch's) or an error (which
// stops the dispatch and is returned: fail closed). Create with
// [NewBailEvent]; dispatch with [BailEvent.Bail].
type BailEvent[P, R any] struct {
	name  string
	id    uint64
	lists listCache[BailListener[P, R]]
}

// NewBailEvent declares a bail event.
func NewBailEvent[P, R any](name string) *BailEvent[P, R] {
	return &BailEvent[P, R]{name: name, id: eventIDs.Add(1)}
}

// EventName returns the event name.
func (e *BailEvent[P, R]) EventName() string { return e.name }
func (e *BailEvent[P, R]) eventID() uint64   { return e.id }
func (e *BailEvent[P, R]) snapshot(r *Root) []*listener[BailListener[P, R]] {
	return e.lists.snapshot(r, e.id)
}
func (e *BailEvent[P, R]) listen(c *Context, h BailListener[P, R], o listenOptions) error {
	return register(c, e.id, e.name, h, o)
}

// Bail runs e's listeners admitted by t in order and returns the first
// handled result. The first error (a panic becomes a *PanicError) stops the
// dispatch and is returned. (zero, false, nil) means no listener handled p.
// The zero Target is an error wrapping [ErrNoTarget].
func (e *BailEvent[P, R]) Bail(ctx context.Context, t Target, p P) (R, bool, error) {
	if t.root == nil {
		var zero R
		return zero, false, fmt.Errorf("event %s: %w", e.name, ErrNoTarget)
	}
	for _, l := range e.lists.snapshot(t.root, e.id) {
		if !l.admitted(t) || l.removed.Load() {
			continue
		}
		r, handled, err := bailCall(ctx, l.h, p)
		if err != nil {
			var zero R
			return zero, false, fmt.Errorf("event %s: plugin %q: %w", e.name, l.fiber.plugin.Name(), err)
		}
		if handled {
			return r, true, nil
		}
	}
	var zero R
	return zero, false, nil
}

// bailCall calls h, converting a panic into a *PanicError.
func bailCall[P, R any](ctx context.Context, h func(context.Context, P) (R, bool, error), p P) (r R, handled bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			var zero R
			r, handled, err = zero, false, recovered(v)
		}
	}()
	return h(ctx, p)
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
// received it returns (dispatch state is pooled). Create with
// [NewWaterfallEvent]; dispatch with [WaterfallEvent.Run].
type WaterfallEvent[P, R any] struct {
	name  string
	id    uint64
	lists listCache[WaterfallListener[P, R]]
	pool  sync.Pool // *waterfallRun[P, R], reused across dispatches
}

// WaterfallListener is the listener shape of a [WaterfallEvent]: it
// receives the payload and next (the rest of the chain), and returns the
// result. A function of another shape passed to [On] with a waterfall event
// fails to compile with an error naming this type.
type WaterfallListener[P, R any] = func(ctx context.Context, p P, next Next[P, R]) (R, error)

// NewWaterfallEvent declares a waterfall event.
func NewWaterfallEvent[P, R any](name string) *WaterfallEvent[P, R] {
	return &WaterfallEvent[P, R]{name: name, id: eventIDs.Add(1)}
}

// EventName returns the event name.
func (e *WaterfallEvent[P, R]) EventName() string { return e.name }
func (e *WaterfallEvent[P, R]) eventID() uint64   { return e.id }
func (e *WaterfallEvent[P, R]) snapshot(r *Root) []*listener[WaterfallListener[P, R]] {
	return e.lists.snapshot(r, e.id)
}
func (e *WaterfallEvent[P, R]) listen(c *Context, h WaterfallListener[P, R], o listenOptions) error {
	return register(c, e.id, e.name, h, o)
}

// waterfallRun is one dispatch's state. nexts[i] continues the dispatch at
// list index i: each position has its own closure (made once per pooled
// run), so a step needs no saved position and a listener may call its next
// again (retry) without any state to restore.
type waterfallRun[P, R any] struct {
	ev    *WaterfallEvent[P, R]
	list  []*listener[WaterfallListener[P, R]]
	t     Target
	inner Next[P, R]
	nexts []Next[P, R]
}

// stepAt returns the continuation at list index i: it calls the first
// admitted listener at or after i (a panic in it becomes a *PanicError
// naming its plugin), or inner after the last one.
func (w *waterfallRun[P, R]) stepAt(from int) Next[P, R] {
	return func(ctx context.Context, p P) (r R, err error) {
		list := w.list
		i := from
		for ; i < len(list); i++ {
			if l := list[i]; l.admitted(w.t) && !l.removed.Load() {
				break
			}
		}
		if i == len(list) {
			if w.inner == nil {
				return r, nil
			}
			return callInner(ctx, p, w.inner)
		}
		l := list[i]
		defer func() {
			if v := recover(); v != nil {
				var zero R
				r, err = zero, fmt.Errorf("event %s: plugin %q: %w", w.ev.name, l.fiber.plugin.Name(), recovered(v))
			}
		}()
		return l.h(ctx, p, w.nexts[i+1])
	}
}

// Run dispatches p through e's listeners admitted by t around inner (which
// may be nil: then the last next returns the zero R). It returns the
// outermost listener's result. Errors and panics (as *PanicError)
// propagate. The zero Target is an error wrapping [ErrNoTarget] (inner does
// not run: a policy event never fails open).
func (e *WaterfallEvent[P, R]) Run(ctx context.Context, t Target, p P, inner Next[P, R]) (R, error) {
	if t.root == nil {
		var zero R
		return zero, fmt.Errorf("event %s: %w", e.name, ErrNoTarget)
	}
	list := e.lists.snapshot(t.root, e.id)
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
	}
	for len(w.nexts) <= len(list) {
		w.nexts = append(w.nexts, w.stepAt(len(w.nexts)))
	}
	w.list, w.t, w.inner = list, t, inner
	r, err := w.nexts[0](ctx, p)
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

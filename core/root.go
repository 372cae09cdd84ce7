package core

import (
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Root is one runtime: the root fiber, the service table, the event
// listeners and the lifecycle queue. Create it with [NewRoot], mount plugins
// through [Root.Context], and end it with [Root.Dispose].
type Root struct {
	logger *slog.Logger
	base   context.Context
	cancel context.CancelFunc
	fiber  *Fiber
	ids    atomic.Uint64

	mu       sync.Mutex
	services map[string]*serviceEntry
	waiters  map[string]map[*Fiber]struct{} // service name → fibers injecting it
	queue    []*Fiber
	draining bool
	queueCtx context.Context // given to StatusChanged listeners (marked: they run on the queue)
	aborted  chan struct{}   // closed by Abort
	abortOne sync.Once
	// abortable: Apply runs on its own goroutine so Abort can abandon it.
	abortable bool
	settled   chan struct{} // closed and replaced at the end of each drain

	events sync.Map // event id → *listenerList[H]
	id     uint64   // distinguishes roots in the events' one-entry list caches
}

var rootIDs atomic.Uint64

// RootOption configures [NewRoot]. The interface is sealed: the options are
// [WithLogger] and [WithAbortableApply].
type RootOption interface{ applyRoot(*Root) }

type rootOptionFunc func(*Root)

func (f rootOptionFunc) applyRoot(r *Root) { f(r) }

// WithLogger sets the logger for lifecycle records and contained errors
// (default slog.Default()).
func WithLogger(l *slog.Logger) RootOption { return rootOptionFunc(func(r *Root) { r.logger = l }) }

// WithAbortableApply runs each Apply on its own goroutine so that
// [Root.Abort] can abandon an Apply that ignores its context (a start
// timeout). Hosts with a start deadline use it (core/fxcore does); it costs
// a goroutine per activation.
func WithAbortableApply() RootOption { return rootOptionFunc(func(r *Root) { r.abortable = true }) }

// NewRoot creates a runtime whose root fiber is active.
func NewRoot(opts ...RootOption) *Root {
	r := &Root{
		id:       rootIDs.Add(1),
		logger:   slog.Default(),
		services: map[string]*serviceEntry{},
		waiters:  map[string]map[*Fiber]struct{}{},
		settled:  make(chan struct{}),
		aborted:  make(chan struct{}),
	}
	for _, o := range opts {
		o.applyRoot(r)
	}
	r.base, r.cancel = context.WithCancel(context.Background())
	r.queueCtx = &marked{Context: r.base, mark: mark{root: r, kind: markQueue}}
	f := r.newFiber(rootPlugin, nil, nil)
	f.state = StateActive
	f.actCtx, f.actCancel = r.activation(f)
	r.fiber = f
	return r
}

var rootPlugin = Define("root", func(*Context, struct{}) error { return nil })

// Context returns the root context. Plugins mounted through it are top-level
// fibers; services looked up through it are global.
func (r *Root) Context() *Context { return r.fiber.ctx }

// Logger returns the runtime's logger.
func (r *Root) Logger() *slog.Logger { return r.logger }

// Dispose unloads every fiber (in reverse order of mounting, each strictly
// LIFO) and disposes the root, waiting for the end: it returns the joined
// errors of failing disposers. If ctx ends first, Dispose returns ctx.Err()
// while the teardown finishes in the background (the host is exiting).
// Dispose is for the host: it is terminal and idempotent.
func (r *Root) Dispose(ctx context.Context) error {
	done := r.fiber.Done()
	go func() { _ = r.fiber.Dispose(context.Background()) }() // runs the teardown unless a drain is under way
	select {
	case <-done:
		r.cancel()
		return r.fiber.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Fibers returns the top-level fibers in mount order.
func (r *Root) Fibers() []*Fiber { return r.fiber.Children() }

func (r *Root) newFiber(p Plugin, cfg any, parent *Fiber) *Fiber {
	f := &Fiber{root: r, id: r.ids.Add(1), plugin: p, parent: parent, cfg: cfg, state: StatePending}
	f.ctx = &Context{root: r, fiber: f}
	f.marked = marked{Context: r.base, mark: mark{root: r, fiber: f, kind: markActivation}}
	if parent != nil {
		f.ctx.scope = parent.scopeID
		f.scopeID = parent.scopeID
	}
	return f
}

// enqueueLocked adds f to the lifecycle queue once. r.mu must be held.
func (r *Root) enqueueLocked(f *Fiber) {
	if f.queued {
		return
	}
	f.queued = true
	r.queue = append(r.queue, f)
}

// drain runs queued transitions until the queue is empty, unless another
// goroutine is already draining (then the work is left to it).
func (r *Root) drain() {
	r.mu.Lock()
	if r.draining {
		r.mu.Unlock()
		return
	}
	r.draining = true
	for len(r.queue) > 0 {
		f := r.queue[0]
		r.queue[0] = nil
		r.queue = r.queue[1:]
		f.queued = false
		r.mu.Unlock()
		r.evaluate(f)
		r.mu.Lock()
	}
	r.queue = nil
	r.draining = false
	close(r.settled)
	r.settled = make(chan struct{})
	r.mu.Unlock()
}

// Abort stops waiting for Apply calls in progress on a root created
// [WithAbortableApply]: each is abandoned (its fiber fails with
// ErrAbandoned; effects it registers later are refused and undone). On any
// root, queued fibers that were about to load stay pending. Use it
// when start-up exceeded its deadline, before Dispose, so teardown is not
// blocked by an Apply that ignores its context. Abort is idempotent.
func (r *Root) Abort() { r.abortOne.Do(func() { close(r.aborted) }) }

// Loading returns the fibers whose Apply is running (for diagnostics such
// as naming the plugin that made start-up time out).
func (r *Root) Loading() []*Fiber {
	var out []*Fiber
	var walk func(f *Fiber)
	walk = func(f *Fiber) {
		for _, c := range f.children {
			if c.state == StateLoading {
				out = append(out, c)
			}
			walk(c)
		}
	}
	r.mu.Lock()
	walk(r.fiber)
	r.mu.Unlock()
	return out
}

// recovered converts a recovered panic value into a *PanicError with stack.
func recovered(v any) error {
	return &PanicError{Value: v, Stack: debug.Stack()}
}

// callSafe runs fn and converts a panic into a *PanicError.
func callSafe(fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = recovered(v)
		}
	}()
	return fn()
}

// logFailure logs a contained error once, with the plugin name and the
// panic stack when there is one.
func (r *Root) logFailure(msg string, f *Fiber, err error, attrs ...any) {
	attrs = append(attrs, "plugin", f.plugin.Name(), "fiber", f.id, "error", err.Error())
	var pe *PanicError
	if errors.As(err, &pe) {
		attrs = append(attrs, "stack", string(pe.Stack))
	}
	r.logger.Error(msg, attrs...)
}

// since is a small helper for duration attributes in logs.
func since(t time.Time) slog.Attr { return slog.Duration("took", time.Since(t)) }

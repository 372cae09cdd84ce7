package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Fiber is one plugin instance: its state, config, effects and the services
// it resolved. Create fibers with [Context.Plugin]; observe them with State,
// Err and PendingOn; control them with Await, Update and Dispose.
type Fiber struct {
	root    *Root
	id      uint64
	plugin  Plugin
	parent  *Fiber
	ctx     *Context
	scopeID *ScopeID

	// guarded by root.mu
	state     State
	err       error
	cfg       any
	queued    bool
	pendingOn []string
	effects   []*effect
	deps      map[string]*serviceEntry
	provided  []*serviceEntry
	children  []*Fiber
	dispose   bool  // final disposal requested
	refused   bool  // never mounted: the parent was inactive (err is ErrInactive)
	restart   bool  // reload requested (Update)
	prevState State // state before the current transition (for StatusChange)
	failure   error // failure reported by a goroutine of this activation
	gen       uint64
	actCtx    context.Context
	actCancel context.CancelFunc
}

type effect struct {
	label   string
	dispose func()
	child   *Fiber
	once    sync.Once
}

// ID is the fiber's unique number within its root (the root fiber is 1).
func (f *Fiber) ID() uint64 { return f.id }

// Plugin returns the fiber's plugin definition.
func (f *Fiber) Plugin() Plugin { return f.plugin }

// Parent returns the parent fiber (nil for the root fiber).
func (f *Fiber) Parent() *Fiber { return f.parent }

// Context returns the fiber's own context.
func (f *Fiber) Context() *Context { return f.ctx }

// State returns the current lifecycle state.
func (f *Fiber) State() State {
	f.root.mu.Lock()
	defer f.root.mu.Unlock()
	return f.state
}

// Err returns the error that failed the fiber: nil unless it failed, or,
// for a fiber [Context.Plugin] refused to mount (the parent was inactive),
// ErrInactive.
func (f *Fiber) Err() error {
	f.root.mu.Lock()
	defer f.root.mu.Unlock()
	if f.state == StateFailed || f.refused {
		return f.err
	}
	return nil
}

// Config returns the config value the fiber was mounted or last updated with
// (nil means defaults).
func (f *Fiber) Config() any {
	f.root.mu.Lock()
	defer f.root.mu.Unlock()
	return f.cfg
}

// PendingOn lists the injected services that are missing while the fiber is
// pending (nil otherwise).
func (f *Fiber) PendingOn() []string {
	f.root.mu.Lock()
	defer f.root.mu.Unlock()
	if f.state != StatePending {
		return nil
	}
	return slices.Clone(f.pendingOn)
}

// Provides lists the services the fiber currently provides.
func (f *Fiber) Provides() []string {
	f.root.mu.Lock()
	defer f.root.mu.Unlock()
	out := make([]string, 0, len(f.provided))
	for _, s := range f.provided {
		out = append(out, s.name)
	}
	return out
}

// Children returns the live child fibers in mount order.
func (f *Fiber) Children() []*Fiber {
	f.root.mu.Lock()
	defer f.root.mu.Unlock()
	return slices.Clone(f.children)
}

// Effects returns the labels of the fiber's live effects in registration
// order (diagnostics).
func (f *Fiber) Effects() []string {
	f.root.mu.Lock()
	defer f.root.mu.Unlock()
	out := make([]string, len(f.effects))
	for i, e := range f.effects {
		out[i] = e.label
	}
	return out
}

// settledLocked: no transition queued or running for f.
func (f *Fiber) settledLocked() bool {
	return !f.queued && f.state != StateLoading && f.state != StateUnloading
}

// Await waits until the fiber has no transition queued or running and
// returns its error if it failed. A pending fiber is settled: Await returns
// nil and State tells why. Called from inside Apply or a disposer, Await
// returns ErrInTransition rather than deadlock.
func (f *Fiber) Await(ctx context.Context) error {
	if err := f.root.waitFor(ctx, f.settledLocked); err != nil {
		return err
	}
	return f.Err()
}

// Update replaces the fiber's config and reloads it: the new config is
// validated first, so an invalid update returns a *ConfigError and the
// running instance keeps its old config. A pending or failed fiber stores
// the config and retries. Update waits for the reload like Await.
func (f *Fiber) Update(ctx context.Context, cfg any) error {
	if tp, ok := f.plugin.(interface{ validate(any) error }); ok {
		if err := tp.validate(cfg); err != nil {
			return err
		}
	}
	r := f.root
	r.mu.Lock()
	if f.state == StateDisposed || f.dispose {
		r.mu.Unlock()
		return ErrInactive
	}
	f.cfg = cfg
	f.restart = true
	r.enqueueLocked(f)
	r.mu.Unlock()
	r.drain()
	return f.Await(ctx)
}

// Dispose unloads the fiber for good: its services are withdrawn (their
// dependents unload first), then its effects are undone one at a time in
// reverse order, each exactly once; child fibers are disposed at their slot.
// Errors from disposers are logged and joined; disposal never stops half
// way. Dispose is idempotent. Called from inside Apply or a disposer, or from
// a goroutine started by [Go] whose activation is ending, it only schedules
// the disposal, which runs when the current transition returns.
func (f *Fiber) Dispose(ctx context.Context) error {
	r := f.root
	r.mu.Lock()
	if f.state == StateDisposed {
		r.mu.Unlock()
		return nil
	}
	f.dispose = true
	r.enqueueLocked(f)
	onDrainer := r.onDrainerLocked()
	r.mu.Unlock()
	if onDrainer {
		return nil
	}
	r.drain()
	var errs error
	err := r.waitFor(ctx, func() bool { return f.state == StateDisposed })
	if errors.Is(err, ErrInTransition) {
		return nil // scheduled; a goroutine of an ending activation cannot wait for it
	}
	if err != nil {
		return err
	}
	r.mu.Lock()
	errs = f.err
	r.mu.Unlock()
	return errs
}

// evaluate decides and runs f's next transition. It runs on the drainer.
func (r *Root) evaluate(f *Fiber) {
	r.mu.Lock()
	if f.state == StateDisposed {
		r.mu.Unlock()
		return
	}
	if f.dispose {
		r.mu.Unlock()
		r.unload(f, StateDisposed, nil)
		return
	}
	if f.failure != nil && (f.state == StateActive || f.state == StateLoading) {
		err := f.failure
		f.failure = nil
		r.mu.Unlock()
		r.logFailure("plugin failed", f, err)
		r.unload(f, StateFailed, err)
		return
	}
	if f.parent != nil && !f.parent.state.accepts() {
		r.mu.Unlock()
		return
	}
	deps, missing := r.resolveLocked(f)
	state := f.state
	changed := !sameDeps(deps, f.deps)
	restart := f.restart
	notify := missing != nil && state == StatePending && !slices.Equal(missing, f.pendingOn)
	if missing != nil {
		f.pendingOn = missing
	}
	r.mu.Unlock()
	if notify {
		r.status(f, StatePending, StatePending, nil, missing)
	}

	switch state {
	case StateActive:
		if missing == nil && !changed && !restart {
			return
		}
		r.unload(f, StatePending, nil)
		if missing == nil {
			r.load(f, deps)
		}
	case StatePending:
		if missing == nil {
			r.load(f, deps)
		}
	case StateFailed:
		if missing == nil && (changed || restart) {
			r.load(f, deps)
		} else if missing != nil {
			r.mu.Lock()
			f.deps = nil
			r.mu.Unlock()
		}
	}
}

// resolveLocked looks up f's injected services. missing is nil when all are
// provided by active fibers.
func (r *Root) resolveLocked(f *Fiber) (map[string]*serviceEntry, []string) {
	inject := f.plugin.Inject()
	if len(inject) == 0 {
		return nil, nil
	}
	deps := make(map[string]*serviceEntry, len(inject))
	var missing []string
	for _, name := range inject {
		if r.waiters[name] == nil {
			r.waiters[name] = map[*Fiber]struct{}{}
		}
		r.waiters[name][f] = struct{}{}
		s := r.services[name]
		if s == nil || s.owner.state != StateActive {
			missing = append(missing, name)
			continue
		}
		deps[name] = s
	}
	return deps, missing
}

func sameDeps(a, b map[string]*serviceEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// load applies f with the resolved deps.
func (r *Root) load(f *Fiber, deps map[string]*serviceEntry) {
	select {
	case <-r.aborted:
		return // shutting down: stay pending
	default:
	}
	start := time.Now()
	r.mu.Lock()
	f.state = StateLoading
	f.deps = deps
	f.restart = false
	f.err = nil
	f.pendingOn = nil
	f.gen++
	f.actCtx, f.actCancel = context.WithCancel(r.base)
	cfg := f.cfg
	from := f.prevState
	r.mu.Unlock()
	r.status(f, from, StateLoading, nil, nil)

	err := r.runApply(f, cfg)
	if err != nil {
		r.logFailure("plugin failed to apply", f, err)
		r.unload(f, StateFailed, err)
		return
	}
	r.mu.Lock()
	if f.state != StateLoading { // disposed from inside Apply
		r.mu.Unlock()
		return
	}
	f.state = StateActive
	for _, s := range f.provided {
		for w := range r.waiters[s.name] {
			r.enqueueLocked(w)
		}
	}
	if f.failure != nil || f.dispose {
		r.enqueueLocked(f)
	}
	r.mu.Unlock()
	r.status(f, StateLoading, StateActive, nil, nil)
	r.logger.Debug("plugin active", "plugin", f.plugin.Name(), "fiber", f.id, since(start))
}

// runApply calls Apply. On a root created WithAbortableApply it runs Apply
// on its own goroutine and waits for it, unless the root is aborted first (a
// start timeout): then the fiber is abandoned as failed and the drain goes
// on, so teardown is not held hostage by an Apply that ignores its context.
// Otherwise Apply runs inline on the drainer (cheaper: no goroutine and no
// stack growth per activation).
func (r *Root) runApply(f *Fiber, cfg any) error {
	if !r.abortable {
		return callSafe(func() error { return f.plugin.apply(f.ctx, cfg) })
	}
	done := make(chan error, 1)
	go func() {
		id := goid()
		r.mu.Lock()
		r.applier = id
		r.mu.Unlock()
		err := callSafe(func() error { return f.plugin.apply(f.ctx, cfg) })
		r.mu.Lock()
		if r.applier == id {
			r.applier = 0
		}
		r.mu.Unlock()
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-r.aborted:
		r.mu.Lock()
		r.applier = 0
		r.mu.Unlock()
		return fmt.Errorf("plugin %q: %w", f.plugin.Name(), ErrAbandoned)
	}
}

// unload takes f to final (pending, failed or disposed): cancel the
// activation, withdraw its services and unload their dependents, then undo
// the remaining effects LIFO, one at a time.
func (r *Root) unload(f *Fiber, final State, cause error) {
	r.mu.Lock()
	if f.state == StateDisposed {
		r.mu.Unlock()
		return
	}
	from := f.state
	f.state = StateUnloading
	if f.actCancel != nil {
		f.actCancel()
	}
	provided := f.provided
	f.provided = nil
	var dependents []*Fiber
	for i := len(provided) - 1; i >= 0; i-- {
		s := provided[i]
		if r.services[s.name] == s {
			delete(r.services, s.name)
		}
		for w := range r.waiters[s.name] {
			if w.deps[s.name] == s && !slices.Contains(dependents, w) {
				dependents = append(dependents, w)
			}
		}
	}
	r.mu.Unlock()

	// Dependents first: they stop using the services before the provider's
	// other disposers run.
	for _, d := range dependents {
		r.mu.Lock()
		st := d.state
		r.mu.Unlock()
		if st == StateActive {
			r.unload(d, StatePending, nil)
		}
		r.mu.Lock()
		r.enqueueLocked(d)
		r.mu.Unlock()
	}

	r.mu.Lock()
	effects := f.effects
	f.effects = nil
	r.mu.Unlock()
	var errs []error
	for i := len(effects) - 1; i >= 0; i-- {
		if err := r.runEffect(f, effects[i]); err != nil {
			errs = append(errs, err)
		}
	}

	r.mu.Lock()
	f.deps = nil
	f.state = final
	switch final {
	case StateFailed:
		f.err = cause
	case StateDisposed:
		f.err = errors.Join(errs...)
		for name, ws := range r.waiters {
			delete(ws, f)
			if len(ws) == 0 {
				delete(r.waiters, name)
			}
		}
		if p := f.parent; p != nil {
			if i := slices.Index(p.children, f); i >= 0 {
				p.children = slices.Delete(p.children, i, i+1)
			}
			if i := slices.IndexFunc(p.effects, func(e *effect) bool { return e.child == f }); i >= 0 {
				p.effects = slices.Delete(p.effects, i, i+1)
			}
		}
	default:
		f.err = nil
		r.enqueueLocked(f) // re-evaluate: dependencies may be back
	}
	if final != StateDisposed && f.dispose {
		r.enqueueLocked(f)
	}
	f.prevState = final
	pendingOn := slices.Clone(f.pendingOn)
	r.mu.Unlock()
	r.status(f, from, final, cause, pendingOn)
	r.logger.Debug("plugin "+final.String(), "plugin", f.plugin.Name(), "fiber", f.id)
}

func (r *Root) runEffect(f *Fiber, e *effect) (err error) {
	e.once.Do(func() {
		if e.child != nil {
			r.mu.Lock()
			e.child.dispose = true
			r.mu.Unlock()
			r.unload(e.child, StateDisposed, nil)
			r.mu.Lock()
			err = e.child.err
			r.mu.Unlock()
			return
		}
		if e.dispose == nil {
			return // a slot whose body is still running: Effect undoes it when the body returns
		}
		err = callSafe(func() error { e.dispose(); return nil })
		if err != nil {
			err = fmt.Errorf("dispose %s: %w", e.label, err)
			r.logFailure("disposer failed", f, err, "effect", e.label)
		}
	})
	return err
}

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
	run       *unloadRun    // the unload under way (nil when not unloading): &unloading
	unloading unloadRun     // the storage of run (no allocation per unload)
	watchers  []*Fiber      // unloads parked until this fiber's unload ends
	done      chan struct{} // closed when disposed (made by Done)
	marked    marked        // the parent of every activation context: r.base marked with f
}

// An effect is one of: a disposer, a child fiber, or a goroutine started
// by [Go].
type effect struct {
	label   string
	dispose func()
	child   *Fiber
	g       *goroutine
	once    sync.Once
}

// goroutine is the effect of one [Go] body.
type goroutine struct {
	exited bool          // guarded by root.mu
	done   chan struct{} // closed when the body has returned
	cancel context.CancelFunc
}

// unloadRun is an unload in progress. It parks, instead of blocking the
// queue, at a [Go] goroutine that has not returned yet and at a child or
// dependent fiber whose own unload is parked; it resumes on the drain that
// follows the goroutine's return (or the other fiber's unload).
type unloadRun struct {
	final      State
	cause      error
	from       State
	dependents []*Fiber  // to unload before the effects, first to last
	effects    []*effect // the effects left to undo, last first
	taken      bool      // effects were taken from the fiber
	errs       []error
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

// Err returns the outcome of the fiber's last transition: for a failed
// fiber, what failed it; for a disposed fiber, the joined errors of its
// disposers (nil when all succeeded), or ErrInactive for a fiber
// [Context.Plugin] refused to mount (the parent was inactive); nil
// otherwise.
func (f *Fiber) Err() error {
	f.root.mu.Lock()
	defer f.root.mu.Unlock()
	return f.errLocked()
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

// errLocked is Err with root.mu held.
func (f *Fiber) errLocked() error {
	if f.state == StateFailed || f.state == StateDisposed {
		return f.err
	}
	return nil
}

// Done returns a channel that is closed when the fiber is disposed: its
// effects are all undone and [Fiber.Err] holds the disposal's errors. A
// host waits on it (or calls [Fiber.Await]) after [Fiber.Dispose].
func (f *Fiber) Done() <-chan struct{} {
	f.root.mu.Lock()
	defer f.root.mu.Unlock()
	if f.done == nil {
		f.done = make(chan struct{})
		if f.state == StateDisposed {
			close(f.done)
		}
	}
	return f.done
}

// Await waits until the fiber has no transition queued, running or parked
// (an unload waiting for a [Go] goroutine to return), bounded by ctx, and
// returns [Fiber.Err]. A pending fiber is settled: Await returns nil and
// State tells why. When no other goroutine drives the lifecycle queue, the
// caller drives it.
//
// A wait on the lifecycle from inside it cannot end, so it is refused:
// given a context core handed out (see [Context.Context], [Go],
// [StatusChanged]) whose holder runs the transition Await would wait for
// (Apply or an unload of that fiber, a listener on the queue, a Go body
// whose activation has ended), Await returns ErrInTransition instead of
// waiting. With any other context it waits until ctx ends.
func (f *Fiber) Await(ctx context.Context) error {
	if err := f.root.waitFor(ctx, f.settledLocked); err != nil {
		return err
	}
	return f.Err()
}

// Update replaces the fiber's config and schedules a reload, and returns
// without waiting for it. The new config is validated first, so an invalid
// update returns a *ConfigError and the running instance keeps its old
// config; a disposed fiber returns ErrInactive. A pending or failed fiber
// stores the config and retries. When no transition is running, the
// calling goroutine runs the reload itself; Update then returns the
// reload's error ([Fiber.Err]) if the reload finished before it returned,
// nil otherwise. Wait for the reload and its outcome with [Fiber.Await].
// Update never waits on the lifecycle, so a plugin may call it from Apply,
// a disposer, a listener or a [Go] body, on its own fiber too.
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
	r.mu.Lock()
	defer r.mu.Unlock()
	if f.settledLocked() {
		return f.errLocked()
	}
	return nil
}

// Dispose requests the fiber's final unload and returns without waiting
// for it (the way fx's Shutdown signals): its services are withdrawn
// (their dependents unload first), then its effects are undone one at a
// time in reverse order, each exactly once; child fibers are disposed at
// their slot. Errors from disposers are logged and joined; disposal never
// stops half way.
//
// When no transition is running, the calling goroutine runs the disposal
// itself, up to a [Go] goroutine that has not returned yet (the disposal
// resumes when it returns); otherwise the transition in progress takes it
// up when it ends. Dispose returns the joined disposer errors if the fiber
// was disposed before Dispose returned, nil otherwise; wait for the end
// with [Fiber.Done] or [Fiber.Await]. Dispose never waits on the lifecycle,
// so a plugin may call it from Apply, a disposer, a listener or a Go body,
// on its own fiber too. Dispose is idempotent: on a disposed fiber it
// returns nil.
func (f *Fiber) Dispose(ctx context.Context) error {
	r := f.root
	r.mu.Lock()
	if f.state == StateDisposed {
		r.mu.Unlock()
		return nil
	}
	f.dispose = true
	r.enqueueLocked(f)
	r.mu.Unlock()
	r.drain()
	r.mu.Lock()
	defer r.mu.Unlock()
	if f.state == StateDisposed {
		return f.err
	}
	return nil
}

// evaluate decides and runs f's next transition. It runs on the drainer.
func (r *Root) evaluate(f *Fiber) {
	r.mu.Lock()
	if f.state == StateDisposed {
		r.mu.Unlock()
		return
	}
	if f.run != nil {
		r.mu.Unlock()
		r.resume(f)
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
		// A parked unload ends pending, and the fiber is evaluated again.
		if r.unload(f, StatePending, nil) && missing == nil {
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
	f.actCtx, f.actCancel = r.activation(f)
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
	go func() { done <- callSafe(func() error { return f.plugin.apply(f.ctx, cfg) }) }()
	select {
	case err := <-done:
		return err
	case <-r.aborted:
		return fmt.Errorf("plugin %q: %w", f.plugin.Name(), ErrAbandoned)
	}
}

// unload starts taking f to final (pending, failed or disposed): cancel
// the activation, withdraw its services, unload their dependents, then undo
// the effects LIFO, one at a time (see [unloadRun]). It reports whether the
// unload finished; false: it is parked and resumes on a later drain.
func (r *Root) unload(f *Fiber, final State, cause error) bool {
	r.mu.Lock()
	if f.state == StateDisposed {
		r.mu.Unlock()
		return true
	}
	f.unloading = unloadRun{final: final, cause: cause, from: f.state}
	run := &f.unloading
	f.state = StateUnloading
	f.run = run
	if f.actCancel != nil {
		f.actCancel()
	}
	provided := f.provided
	f.provided = nil
	for i := len(provided) - 1; i >= 0; i-- {
		s := provided[i]
		if r.services[s.name] == s {
			delete(r.services, s.name)
		}
		for w := range r.waiters[s.name] {
			if w.deps[s.name] == s && !slices.Contains(run.dependents, w) {
				run.dependents = append(run.dependents, w)
			}
		}
	}
	r.mu.Unlock()
	return r.resume(f)
}

// resume continues f's unload from where it parked; it reports whether the
// unload finished. It runs on the drainer.
func (r *Root) resume(f *Fiber) bool {
	run := f.run
	// Dependents first: they stop using the services before the provider's
	// other disposers run.
	for len(run.dependents) > 0 {
		if !r.unloadDependent(f, run.dependents[0]) {
			return false
		}
		run.dependents = run.dependents[1:]
	}
	if !run.taken {
		r.mu.Lock()
		run.effects, run.taken = f.effects, true
		f.effects = nil
		r.mu.Unlock()
	}
	for len(run.effects) > 0 {
		e := run.effects[len(run.effects)-1]
		done, err := r.undo(f, e)
		if !done {
			return false
		}
		if err != nil {
			run.errs = append(run.errs, err)
		}
		run.effects = run.effects[:len(run.effects)-1]
	}
	r.finishUnload(f)
	return true
}

// unloadDependent unloads d, a user of a service f withdrew, to pending. It
// reports false when f must park until d's unload ends.
func (r *Root) unloadDependent(f, d *Fiber) bool {
	r.mu.Lock()
	if d.run != nil {
		d.watchers = append(d.watchers, f)
		r.mu.Unlock()
		return false
	}
	active := d.state == StateActive
	r.mu.Unlock()
	if active && !r.unload(d, StatePending, nil) {
		r.parkOn(f, d)
		return false
	}
	r.mu.Lock()
	r.enqueueLocked(d)
	r.mu.Unlock()
	return true
}

// parkOn makes f's unload resume when d's ends (if it has not ended).
func (r *Root) parkOn(f, d *Fiber) {
	if f == nil {
		return
	}
	r.mu.Lock()
	if d.run != nil {
		d.watchers = append(d.watchers, f)
	} else {
		r.enqueueLocked(f)
	}
	r.mu.Unlock()
}

// undo undoes one effect of f's unload. It reports false when the unload
// must park: at a Go goroutine still running (its return resumes f), or at
// a child whose own unload is parked.
func (r *Root) undo(f *Fiber, e *effect) (bool, error) {
	switch {
	case e.child != nil:
		return r.disposeChild(f, e.child)
	case e.g != nil:
		r.mu.Lock()
		defer r.mu.Unlock()
		return e.g.exited, nil // not exited: the goroutine's return enqueues f
	}
	return true, r.runEffect(f, e)
}

// disposeChild disposes child at its parent f's slot; false: parked, and f
// (unless nil) resumes when the child's unload ends.
func (r *Root) disposeChild(f, child *Fiber) (bool, error) {
	for {
		r.mu.Lock()
		child.dispose = true
		switch {
		case child.state == StateDisposed:
			err := child.err
			r.mu.Unlock()
			return true, err
		case child.run != nil:
			if f != nil {
				child.watchers = append(child.watchers, f)
			}
			r.mu.Unlock()
			return false, nil
		}
		r.mu.Unlock()
		if !r.unload(child, StateDisposed, nil) {
			r.parkOn(f, child)
			return false, nil
		}
	}
}

// finishUnload takes f to the final state of its unload.
func (r *Root) finishUnload(f *Fiber) {
	r.mu.Lock()
	run := f.run
	final := run.final
	f.run = nil
	for _, w := range f.watchers {
		r.enqueueLocked(w)
	}
	f.watchers = nil
	f.deps = nil
	f.state = final
	switch final {
	case StateFailed:
		f.err = run.cause
	case StateDisposed:
		f.err = errors.Join(run.errs...)
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
		if f.done != nil {
			close(f.done)
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
	r.status(f, run.from, final, run.cause, pendingOn)
	r.logger.Debug("plugin "+final.String(), "plugin", f.plugin.Name(), "fiber", f.id)
}

// runEffect runs a disposer once. Outside an unload (the rollback of a
// failed Effect body) it also disposes a child or waits for a goroutine,
// blocking the caller.
func (r *Root) runEffect(f *Fiber, e *effect) (err error) {
	switch {
	case e.child != nil:
		if done, err := r.disposeChild(nil, e.child); done {
			return err
		}
		return nil // parked: the child finishes when its goroutines return
	case e.g != nil:
		e.g.cancel()
		<-e.g.done
		return nil
	}
	e.once.Do(func() {
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

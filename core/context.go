package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
)

// Context is what a plugin's Apply receives: its handle on the runtime. Each
// fiber has one; a [Scope] derives a scoped view of its own fiber. Everything
// registered through a Context is an effect of its fiber and is visible in
// its scope.
type Context struct {
	root  *Root
	fiber *Fiber
	scope *ScopeID
}

// Root returns the runtime this context belongs to.
func (c *Context) Root() *Root { return c.root }

// Fiber returns the fiber that owns this context's registrations.
func (c *Context) Fiber() *Fiber { return c.fiber }

// Scope returns the scope this context registers into (nil for global).
func (c *Context) Scope() *ScopeID { return c.scope }

// Logger returns the runtime logger annotated with this plugin's name.
func (c *Context) Logger() *slog.Logger {
	return c.root.logger.With("plugin", c.fiber.plugin.Name())
}

// Context returns the activation context: cancelled when the current
// activation of the fiber starts unloading (dependency lost, reload,
// dispose). Outside an activation it is already cancelled. It is marked as
// this fiber's: [Fiber.Await] given it while the fiber is in transition
// (Apply or a disposer running) returns ErrInTransition.
func (c *Context) Context() context.Context {
	c.root.mu.Lock()
	defer c.root.mu.Unlock()
	if c.fiber.actCtx == nil {
		return cancelled
	}
	return c.fiber.actCtx
}

var cancelled = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// Effect registers a reversible resource. body acquires it and returns the
// disposer that releases it (nil when there is nothing to undo). An effect
// is acquired when its body starts: its slot comes before every effect its
// body registers (nested effects), so disposal is strict reverse order of
// acquisition. The disposer runs exactly once, when the fiber unloads, after
// every effect registered later (nested ones included) has been undone. If
// body fails (error or panic), what it acquired is rolled back at once,
// newest first: the nested effects it registered, then the disposer it
// returned; the error is returned and nothing of it stays registered.
// Registering on an unloading, failed or disposed fiber returns ErrInactive
// without calling body; a fiber that starts unloading while body runs undoes
// the effect as soon as body returns, and Effect returns ErrInactive.
func (c *Context) Effect(label string, body func() (dispose func(), err error)) error {
	slot := &effect{label: label}
	if !c.reserve(slot) {
		return fmt.Errorf("effect %s: %w", label, ErrInactive)
	}
	var dispose func()
	err := callSafe(func() error {
		var err error
		dispose, err = body()
		return err
	})
	if err != nil {
		c.rollback(slot)
		if dispose != nil {
			_ = callSafe(func() error { dispose(); return nil })
		}
		return fmt.Errorf("effect %s: %w", label, err)
	}
	if c.fill(slot, dispose) {
		return nil
	}
	if dispose != nil {
		_ = callSafe(func() error { dispose(); return nil })
	}
	return fmt.Errorf("effect %s: %w", label, ErrInactive)
}

// reserve appends slot (no disposer yet) if the fiber accepts effects.
func (c *Context) reserve(slot *effect) bool {
	f := c.fiber
	c.root.mu.Lock()
	defer c.root.mu.Unlock()
	if !f.state.accepts() || f.dispose {
		return false
	}
	f.effects = append(f.effects, slot)
	return true
}

// fill gives slot its disposer (a nil one drops the slot). It reports false
// when an unload took the slot meanwhile: the caller undoes the resource.
func (c *Context) fill(slot *effect, dispose func()) bool {
	f := c.fiber
	c.root.mu.Lock()
	defer c.root.mu.Unlock()
	i := slices.Index(f.effects, slot)
	if i < 0 {
		return false
	}
	if dispose == nil {
		f.effects = slices.Delete(f.effects, i, i+1)
	} else {
		slot.dispose = dispose
	}
	return true
}

// rollback removes slot and the effects registered after it (by its body)
// and undoes those, newest first.
func (c *Context) rollback(slot *effect) {
	f := c.fiber
	c.root.mu.Lock()
	i := slices.Index(f.effects, slot)
	if i < 0 {
		c.root.mu.Unlock()
		return
	}
	nested := slices.Clone(f.effects[i+1:])
	f.effects = f.effects[:i:i]
	c.root.mu.Unlock()
	for j := len(nested) - 1; j >= 0; j-- {
		_ = c.root.runEffect(f, nested[j])
	}
}

// addEffect appends e unless the fiber stopped accepting effects meanwhile,
// in which case undo runs and ErrInactive is returned.
func (c *Context) addEffect(e *effect, undo func(), f *Fiber) error {
	c.root.mu.Lock()
	if !f.state.accepts() {
		c.root.mu.Unlock()
		undo()
		return fmt.Errorf("effect %s: %w", e.label, ErrInactive)
	}
	f.effects = append(f.effects, e)
	c.root.mu.Unlock()
	return nil
}

// Plugin mounts p as a child of this context's fiber with cfg (nil, C or *C
// for the plugin's config type C) and returns the child fiber at once. The
// child is an effect of the parent: it is disposed when the parent unloads.
// It activates when its injected services are available; inside the
// parent's Apply that is after Apply returns. Mounting on an inactive
// context returns a fiber already disposed, whose Err is ErrInactive.
func (c *Context) Plugin(p Plugin, cfg any) *Fiber {
	r := c.root
	child := r.newFiber(p, cfg, c.fiber)
	child.scopeID = c.scope
	child.ctx.scope = c.scope
	r.mu.Lock()
	if !c.fiber.state.accepts() || c.fiber.dispose {
		child.state = StateDisposed
		child.err = ErrInactive
		child.refused = true
		r.mu.Unlock()
		return child
	}
	c.fiber.effects = append(c.fiber.effects, &effect{label: "plugin " + p.Name(), child: child})
	c.fiber.children = append(c.fiber.children, child)
	r.enqueueLocked(child)
	r.mu.Unlock()
	r.drain() // returns at once when a drain is under way (inside Apply: after it)
	return child
}

// Go runs fn in a goroutine owned by c's fiber. fn receives a context of
// the activation (cancelled when the activation starts unloading) and must
// return when it is cancelled: the fiber does not finish unloading until fn
// has returned. The unload does not block the lifecycle queue meanwhile: it
// parks at the goroutine and resumes when fn returns. If fn panics, or
// returns an error while its context is still live, the plugin fails: the
// error is logged once with the stack and the fiber's effects are undone,
// while the host keeps running. Plugins must start goroutines this way,
// never with a raw `go` statement, so that no goroutine outlives its owner
// and no panic crashes the host. If the fiber is inactive, fn is not
// started and ErrInactive is returned.
//
// fn may call Dispose and Update (they do not wait), on its own fiber too.
// Await given fn's context returns ErrInTransition once the activation has
// ended, rather than wait on an unload that waits for fn.
func Go(c *Context, fn func(ctx context.Context) error) error {
	f := c.fiber
	r := c.root
	r.mu.Lock()
	act, gen := f.actCtx, f.gen
	r.mu.Unlock()
	if act == nil {
		act = cancelled
	}
	live, cancel := context.WithCancel(act)
	ctx := &marked{Context: live, mark: mark{root: r, fiber: f, kind: markGo}}
	g := &goroutine{done: make(chan struct{}), cancel: cancel}
	if err := c.addEffect(&effect{label: "goroutine", g: g}, cancel, f); err != nil {
		return err
	}
	go func() {
		var err error
		defer func() {
			if v := recover(); v != nil {
				err = recovered(v)
			}
			failed := err != nil && (ctx.Err() == nil || !errors.Is(err, context.Canceled))
			r.exited(f, g)
			cancel()
			if failed {
				r.failFiber(f, gen, err)
			}
		}()
		err = fn(ctx)
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			err = nil
		}
	}()
	return nil
}

// exited records that g's body returned and resumes an unload of f parked
// at it.
func (r *Root) exited(f *Fiber, g *goroutine) {
	r.mu.Lock()
	g.exited = true
	close(g.done)
	resume := f.run != nil
	if resume {
		r.enqueueLocked(f)
	}
	r.mu.Unlock()
	if resume {
		r.drain()
	}
}

// failFiber records a goroutine failure for the activation gen of f and
// schedules the fiber's unload to failed.
func (r *Root) failFiber(f *Fiber, gen uint64, err error) {
	r.mu.Lock()
	if f.gen != gen || !(f.state == StateActive || f.state == StateLoading) {
		r.mu.Unlock()
		r.logFailure("goroutine failed after its activation ended", f, err)
		return
	}
	f.failure = err
	r.enqueueLocked(f)
	r.mu.Unlock()
	r.drain()
}

package core

import "fmt"

// Key is a typed service slot: the service name and the Go type of its
// value. Declare one per service, next to the service type:
//
//	var Key = core.NewKey[*Registry]("tools")
type Key[T any] struct{ name string }

// NewKey returns the key for the service called name holding a T.
func NewKey[T any](name string) Key[T] { return Key[T]{name: name} }

// Name returns the service name (used in WithInject and harness.yml).
func (k Key[T]) Name() string { return k.name }

type serviceEntry struct {
	name  string
	value any
	owner *Fiber
}

// Provide registers v as the service k, owned by c's fiber, as an effect:
// when the fiber unloads the service is withdrawn and every fiber that
// injects it unloads (and waits again) before the provider's other
// disposers run. Dependents see the service once the provider is active,
// that is after its Apply returns. A second provider of the same name
// returns an error wrapping ErrDuplicateService (Cordis: one implementation
// per service name per realm).
func Provide[T any](c *Context, k Key[T], v T) error {
	r := c.root
	f := c.fiber
	r.mu.Lock()
	if !f.state.accepts() || f.dispose {
		r.mu.Unlock()
		return fmt.Errorf("provide %q: %w", k.name, ErrInactive)
	}
	if old := r.services[k.name]; old != nil {
		r.mu.Unlock()
		return fmt.Errorf("provide %q: %w by plugin %q", k.name, ErrDuplicateService, old.owner.plugin.Name())
	}
	s := &serviceEntry{name: k.name, value: v, owner: f}
	r.services[k.name] = s
	f.provided = append(f.provided, s)
	f.effects = append(f.effects, &effect{label: "provide " + k.name, dispose: func() { r.withdraw(s) }})
	active := f.state == StateActive
	if active {
		for w := range r.waiters[k.name] {
			r.enqueueLocked(w)
		}
	}
	r.mu.Unlock()
	if active {
		r.drain()
	}
	return nil
}

// withdraw removes s if it is still registered (normally unload already did
// it) and schedules its dependents.
func (r *Root) withdraw(s *serviceEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.services[s.name] == s {
		delete(r.services, s.name)
	}
	for w := range r.waiters[s.name] {
		if w.deps[s.name] == s {
			r.enqueueLocked(w)
		}
	}
}

// Use returns the service k that c's plugin (or, for a scope or child
// context, the nearest ancestor plugin) declared in [WithInject]: the value
// resolved when the fiber activated. It panics with an error wrapping
// ErrNotInjected if no plugin on the chain injects k, and with ErrInactive
// if the injecting fiber is not active; inside Apply, a tool body or a
// listener that panic becomes the plugin's or the call's error.
func Use[T any](c *Context, k Key[T]) T {
	r := c.root
	r.mu.Lock()
	for f := c.fiber; f != nil; f = f.parent {
		for _, n := range f.plugin.Inject() {
			if n != k.name {
				continue
			}
			s := f.deps[k.name]
			r.mu.Unlock()
			if s == nil {
				panic(fmt.Errorf("use %q in plugin %q: %w", k.name, f.plugin.Name(), ErrInactive))
			}
			return s.value.(T)
		}
	}
	r.mu.Unlock()
	panic(fmt.Errorf("use %q in plugin %q: %w (declare it with core.WithInject, or use core.Lookup)", k.name, c.fiber.plugin.Name(), ErrNotInjected))
}

// Lookup returns the service k if it is provided by an active fiber (or by
// c's own fiber). It never blocks and does not make c's fiber depend on k:
// use it for optional services, looked up at the point of use (dsh's rule
// for optional services).
func Lookup[T any](c *Context, k Key[T]) (T, bool) {
	r := c.root
	r.mu.Lock()
	s := r.services[k.name]
	ok := s != nil && (s.owner.state == StateActive || s.owner == c.fiber)
	r.mu.Unlock()
	if !ok {
		var zero T
		return zero, false
	}
	v, ok := s.value.(T)
	return v, ok
}

package core_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
)

// Adversarial lifecycles: each must settle without deadlock or race.

func TestDisposeFromInsideADisposer(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	var rec recorder
	other := r.Context().Plugin(core.Define("other", func(c *core.Context, _ struct{}) error {
		return c.Effect("o", func() (func(), error) { return func() { rec.add("other undone") }, nil })
	}), nil)
	var self *core.Fiber
	self = r.Context().Plugin(core.Define("self", func(c *core.Context, _ struct{}) error {
		return c.Effect("x", func() (func(), error) {
			return func() {
				rec.add("x undone")
				if err := self.Dispose(context.Background()); err != nil {
					rec.add("self dispose: " + err.Error())
				}
				if err := other.Dispose(context.Background()); err != nil {
					rec.add("other dispose: " + err.Error())
				}
			}, nil
		})
	}), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := self.Dispose(ctx); err != nil {
		t.Fatal(err)
	}
	if err := other.Await(ctx); err != nil {
		t.Fatal(err)
	}
	if self.State() != core.StateDisposed || other.State() != core.StateDisposed {
		t.Fatalf("states %v %v; log %v", self.State(), other.State(), rec.get())
	}
}

func TestProviderWithdrawnWhileDependentLoads(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	entered := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	prov := r.Context().Plugin(core.Define("prov", func(c *core.Context, _ struct{}) error {
		return core.Provide(c, greeterKey, &greeter{"hi"})
	}), nil)
	depc := make(chan *core.Fiber, 1)
	go func() {
		depc <- r.Context().Plugin(core.Define("dep", func(c *core.Context, _ struct{}) error {
			_ = core.Use(c, greeterKey)
			once.Do(func() { close(entered) })
			<-release
			return nil
		}, core.WithInject("greeter")), nil)
	}()
	<-entered
	done := make(chan error, 1)
	go func() { done <- prov.Dispose(context.Background()) }()
	time.Sleep(20 * time.Millisecond)
	close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("provider dispose deadlocked")
	}
	dep := <-depc
	if err := dep.Await(ctx); err != nil {
		t.Fatal(err)
	}
	if dep.State() != core.StatePending {
		t.Fatalf("dependent state = %v, want pending", dep.State())
	}
}

func TestUpdateRacingDispose(t *testing.T) {
	t.Parallel()
	for i := 0; i < 50; i++ {
		r := newRoot(t)
		p := core.Define("p", func(c *core.Context, cfg struct{ N int }) error {
			return c.Effect("e", func() (func(), error) { return func() {}, nil })
		})
		f := r.Context().Plugin(p, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var wg sync.WaitGroup
		for j := 0; j < 4; j++ {
			wg.Add(2)
			go func() {
				defer wg.Done()
				err := f.Update(ctx, struct{ N int }{j})
				if err != nil && !errors.Is(err, core.ErrInactive) {
					t.Errorf("update: %v", err)
				}
			}()
			go func() { defer wg.Done(); _ = f.Dispose(ctx) }()
		}
		wg.Wait()
		if ctx.Err() != nil {
			t.Fatal("deadlock")
		}
		cancel()
		if f.State() != core.StateDisposed {
			t.Fatalf("state = %v", f.State())
		}
		if err := r.Dispose(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestStatusListenerPanicIsContained(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	r.Context().Plugin(core.Define("observer", func(c *core.Context, _ struct{}) error {
		return core.On(c, core.StatusChanged, func(_ context.Context, s core.StatusChange) error {
			if s.Plugin == "observed" {
				panic("listener exploded")
			}
			return nil
		})
	}), nil)
	f := r.Context().Plugin(core.Define("observed", func(*core.Context, struct{}) error { return nil }), nil)
	if err := f.Await(context.Background()); err != nil || f.State() != core.StateActive {
		t.Fatalf("%v %v", f.State(), err)
	}
	if err := f.Dispose(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestStatusListenerDrivingLifecycle(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	var target *core.Fiber
	r.Context().Plugin(core.Define("observer", func(c *core.Context, _ struct{}) error {
		return core.On(c, core.StatusChanged, func(ctx context.Context, s core.StatusChange) error {
			if s.Plugin == "trigger" && s.To == core.StateActive && target != nil {
				_ = target.Update(ctx, struct{ N int }{2})
				_ = target.Dispose(ctx)
			}
			return nil
		})
	}), nil)
	target = r.Context().Plugin(core.Define("target", func(*core.Context, struct{ N int }) error { return nil }), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tr := r.Context().Plugin(core.Define("trigger", func(*core.Context, struct{}) error { return nil }), nil)
	if err := tr.Await(ctx); err != nil {
		t.Fatal(err)
	}
	if err := target.Await(ctx); err != nil {
		t.Fatal(err)
	}
	if target.State() != core.StateDisposed {
		t.Fatalf("target = %v", target.State())
	}
}

func TestGoErrorsAndPanicsFailThePlugin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		fn   func(ctx context.Context) error
	}{
		{"error", func(context.Context) error { return errors.New("boom") }},
		{"panic", func(context.Context) error { panic("boom") }},
		{"wrapped canceled while live", func(context.Context) error { return context.Canceled }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRoot(t)
			f := r.Context().Plugin(core.Define("g", func(c *core.Context, _ struct{}) error {
				return core.Go(c, tc.fn)
			}), nil)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			for f.State() != core.StateFailed && ctx.Err() == nil {
				time.Sleep(time.Millisecond)
			}
			if f.State() != core.StateFailed || f.Err() == nil {
				t.Fatalf("state %v err %v", f.State(), f.Err())
			}
		})
	}
}

func TestGoroutineDisposingItsOwnFiber(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	f := r.Context().Plugin(core.Define("g", func(c *core.Context, _ struct{}) error {
		fib := c.Fiber()
		return core.Go(c, func(ctx context.Context) error {
			return fib.Dispose(context.Background())
		})
	}), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for f.State() != core.StateDisposed && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	if f.State() != core.StateDisposed {
		t.Fatalf("deadlock: state %v", f.State())
	}
}

func TestGoroutineUpdatingItsOwnFiber(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	var mu sync.Mutex
	n := 0
	f := r.Context().Plugin(core.Define("g", func(c *core.Context, cfg struct{ N int }) error {
		fib := c.Fiber()
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if !first {
			return nil
		}
		return core.Go(c, func(ctx context.Context) error {
			_ = fib.Update(context.Background(), struct{ N int }{1})
			return nil
		})
	}), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		mu.Lock()
		m := n
		mu.Unlock()
		if m >= 2 && f.State() == core.StateActive {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if ctx.Err() != nil {
		t.Fatalf("deadlock: state %v", f.State())
	}
}

// The goroutine's Dispose lands while another goroutine drains the queue: the
// drainer then waits for the goroutine to return, so the goroutine must not
// wait for the drain.
func TestGoroutineDisposingItsOwnFiberWhileAnotherDrains(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	slowEntered := make(chan struct{})
	releaseSlow := make(chan struct{})
	disposed := make(chan error, 1)
	f := r.Context().Plugin(core.Define("g", func(c *core.Context, _ struct{}) error {
		fib := c.Fiber()
		return core.Go(c, func(ctx context.Context) error {
			<-slowEntered
			go func() { time.Sleep(20 * time.Millisecond); close(releaseSlow) }()
			disposed <- fib.Dispose(context.Background())
			return nil
		})
	}), nil)
	go r.Context().Plugin(core.Define("slow", func(*core.Context, struct{}) error {
		close(slowEntered)
		<-releaseSlow
		return nil
	}), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	select {
	case err := <-disposed:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("deadlock")
	}
	if err := f.Await(ctx); err != nil {
		t.Fatal(err)
	}
	if f.State() != core.StateDisposed {
		t.Fatalf("state %v", f.State())
	}
}

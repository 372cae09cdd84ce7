package core_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
)

func TestWrongConfigTypeIsAnError(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	p := core.Define("p", func(*core.Context, struct{ N int }) error { return nil })
	f := r.Context().Plugin(p, "not a struct")
	if err := f.Await(context.Background()); err == nil {
		t.Fatalf("mounted with a string config: state %v", f.State())
	}
	g := r.Context().Plugin(p, nil)
	if err := g.Update(context.Background(), 42); err == nil {
		t.Fatal("update with an int config succeeded")
	}
}

func TestRootDisposeWhileMounting(t *testing.T) {
	t.Parallel()
	for i := 0; i < 30; i++ {
		r := core.NewRoot()
		var wg sync.WaitGroup
		for j := 0; j < 4; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.Context().Plugin(core.Define("p", func(c *core.Context, _ struct{}) error {
					return core.Go(c, func(ctx context.Context) error { <-ctx.Done(); return nil })
				}), nil)
			}()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = r.Dispose(ctx)
		wg.Wait()
		if ctx.Err() != nil {
			t.Fatal("deadlock")
		}
		cancel()
		for _, f := range r.Fibers() {
			if f.State() != core.StateDisposed {
				t.Fatalf("fiber left %v after root dispose", f.State())
			}
		}
	}
}

func TestScopeDisposeRacingEmit(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	ev := core.NewEmitEvent[int]("race")
	host := r.Context().Plugin(core.Define("host", func(*core.Context, struct{}) error { return nil }), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		id := core.NewScopeID("s", nil)
		s, err := core.NewScope(host.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if err := core.On(s.Context(), ev, func(context.Context, int) error { return nil }); err != nil {
			t.Fatal(err)
		}
		wg.Add(2)
		go func() { defer wg.Done(); ev.Emit(ctx, host.Context().To(id), 1) }()
		go func() { defer wg.Done(); _ = s.Dispose(ctx) }()
	}
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatal("deadlock")
	}
}

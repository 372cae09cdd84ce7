package core_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
)

// Lifecycle calls from inside the lifecycle. Core recognises the caller by
// the context it handed out (never by goroutine identity): a wait that would
// wait on its own transition returns ErrInTransition; Dispose and Update
// never wait.

func deadline(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestAwaitFromInsideApplyIsErrInTransition(t *testing.T) {
	t.Parallel()
	for _, abortable := range []bool{false, true} {
		t.Run(map[bool]string{false: "inline", true: "abortable"}[abortable], func(t *testing.T) {
			t.Parallel()
			var opts []core.RootOption
			opts = append(opts, core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
			if abortable {
				opts = append(opts, core.WithAbortableApply())
			}
			r := core.NewRoot(opts...)
			t.Cleanup(func() { _ = r.Dispose(context.Background()) })
			ready := r.Context().Plugin(core.Define("ready", func(*core.Context, struct{}) error { return nil }), nil)
			if err := ready.Await(deadline(t)); err != nil {
				t.Fatal(err)
			}
			var self, child, settled error
			f := r.Context().Plugin(core.Define("p", func(c *core.Context, _ struct{}) error {
				self = c.Fiber().Await(c.Context())
				k := c.Plugin(core.Define("kid", func(*core.Context, struct{}) error { return nil }), nil)
				child = k.Await(c.Context()) // queued: it loads after this Apply
				settled = ready.Await(c.Context())
				return nil
			}), nil)
			if err := f.Await(deadline(t)); err != nil {
				t.Fatal(err)
			}
			if !errors.Is(self, core.ErrInTransition) || !errors.Is(child, core.ErrInTransition) {
				t.Fatalf("self %v, child %v", self, child)
			}
			// A fiber that is settled already needs no wait: nil, not an error.
			if settled != nil {
				t.Fatalf("settled: %v", settled)
			}
			if kid := f.Children()[0]; kid.State() != core.StateActive {
				t.Fatalf("child %v", kid.State())
			}
		})
	}
}

func TestAwaitFromADisposerIsErrInTransition(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	other := r.Context().Plugin(core.Define("other", func(*core.Context, struct{}) error { return nil }), nil)
	var self, queued error
	f := r.Context().Plugin(core.Define("p", func(c *core.Context, _ struct{}) error {
		return c.Effect("x", func() (func(), error) {
			return func() {
				self = c.Fiber().Await(c.Context())
				_ = other.Update(c.Context(), struct{}{}) // queued behind this unload
				queued = other.Await(c.Context())
			}, nil
		})
	}), nil)
	if err := f.Dispose(deadline(t)); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(self, core.ErrInTransition) || !errors.Is(queued, core.ErrInTransition) {
		t.Fatalf("self %v, queued %v", self, queued)
	}
	if err := other.Await(deadline(t)); err != nil || other.State() != core.StateActive {
		t.Fatalf("other: %v %v", other.State(), err)
	}
}

func TestAwaitFromAStatusListenerIsErrInTransition(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	var got []error
	var target *core.Fiber
	r.Context().Plugin(core.Define("observer", func(c *core.Context, _ struct{}) error {
		return core.On(c, core.StatusChanged, func(ctx context.Context, s core.StatusChange) error {
			if s.Plugin == "trigger" && s.To == core.StateActive {
				_ = target.Update(ctx, struct{ N int }{2})
				got = append(got, target.Await(ctx))
			}
			return nil
		})
	}), nil)
	target = r.Context().Plugin(core.Define("target", func(*core.Context, struct{ N int }) error { return nil }), nil)
	tr := r.Context().Plugin(core.Define("trigger", func(*core.Context, struct{}) error { return nil }), nil)
	if err := tr.Await(deadline(t)); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !errors.Is(got[0], core.ErrInTransition) {
		t.Fatalf("got %v", got)
	}
	if target.Config() != (struct{ N int }{2}) || target.State() != core.StateActive {
		t.Fatalf("target %v %v", target.State(), target.Config())
	}
}

// A Go body that disposes its own fiber and then waits for it: the wait
// would wait on the unload that waits for the body, so it returns
// ErrInTransition once the activation ended, and the unload completes when
// the body returns.
func TestGoBodyAwaitingItsOwnDisposalIsErrInTransition(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	got := make(chan error, 1)
	f := r.Context().Plugin(core.Define("g", func(c *core.Context, _ struct{}) error {
		fib := c.Fiber()
		return core.Go(c, func(ctx context.Context) error {
			if err := fib.Dispose(ctx); err != nil {
				return err
			}
			got <- fib.Await(ctx)
			return nil
		})
	}), nil)
	ctx := deadline(t)
	select {
	case err := <-got:
		if !errors.Is(err, core.ErrInTransition) {
			t.Fatalf("await = %v", err)
		}
	case <-ctx.Done():
		t.Fatal("deadlock")
	}
	select {
	case <-f.Done():
	case <-ctx.Done():
		t.Fatalf("not disposed: %v", f.State())
	}
}

// A Go body whose activation is live waits like anyone else: no spurious
// ErrInTransition while another fiber loads.
func TestGoBodyAwaitingAnotherFiberWaits(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	release := make(chan struct{})
	other := make(chan *core.Fiber, 1)
	got := make(chan error, 1)
	r.Context().Plugin(core.Define("g", func(c *core.Context, _ struct{}) error {
		return core.Go(c, func(ctx context.Context) error {
			got <- (<-other).Await(ctx)
			<-ctx.Done()
			return nil
		})
	}), nil)
	go func() {
		other <- r.Context().Plugin(core.Define("slow", func(*core.Context, struct{}) error { <-release; return nil }), nil)
	}()
	time.Sleep(10 * time.Millisecond) // let the body wait while slow's Apply runs (or before it)
	close(release)
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-deadline(t).Done():
		t.Fatal("deadlock")
	}
}

func TestUpdateFromInsideApplySchedulesTheReload(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	var rec recorder
	f := r.Context().Plugin(core.Define("p", func(c *core.Context, cfg struct{ N int }) error {
		rec.add(strings.Repeat("i", cfg.N+1))
		if cfg.N == 0 {
			if err := c.Fiber().Update(c.Context(), struct{ N int }{1}); err != nil {
				return err
			}
		}
		return nil
	}), nil)
	if err := f.Await(deadline(t)); err != nil {
		t.Fatal(err)
	}
	if got := rec.get(); !slices.Equal(got, []string{"i", "ii"}) || f.State() != core.StateActive {
		t.Fatalf("applies %v, state %v", got, f.State())
	}
}

// An unload waiting for a goroutine does not hold up the queue: other
// fibers load meanwhile, and the host's Await and Done wait for the end.
func TestUnloadParksAtARunningGoroutineWithoutBlockingTheQueue(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	release := make(chan struct{})
	var rec recorder
	f := r.Context().Plugin(core.Define("slow-stop", func(c *core.Context, _ struct{}) error {
		_ = c.Effect("first", func() (func(), error) { return func() { rec.add("first undone") }, nil })
		if err := core.Go(c, func(ctx context.Context) error {
			<-ctx.Done()
			<-release
			rec.add("goroutine returned")
			return nil
		}); err != nil {
			return err
		}
		return c.Effect("last", func() (func(), error) { return func() { rec.add("last undone") }, nil })
	}), nil)
	ctx := deadline(t)
	if err := f.Await(ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.Dispose(ctx); err != nil {
		t.Fatal(err)
	}
	if st := f.State(); st != core.StateUnloading {
		t.Fatalf("state after Dispose = %v, want unloading (parked)", st)
	}
	g := r.Context().Plugin(core.Define("meanwhile", func(*core.Context, struct{}) error { return nil }), nil)
	if err := g.Await(ctx); err != nil || g.State() != core.StateActive {
		t.Fatalf("queue blocked: %v %v", g.State(), err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := f.Await(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("host await of a parked unload = %v", err)
	}
	close(release)
	select {
	case <-f.Done():
	case <-ctx.Done():
		t.Fatal("the unload did not resume")
	}
	want := []string{"last undone", "goroutine returned", "first undone"}
	if got := rec.get(); !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

// A parent's unload parks at a child whose unload is parked, so LIFO holds
// across the tree: the parent's earlier effects wait for the child.
func TestParentUnloadWaitsForAParkedChild(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	release := make(chan struct{})
	var rec recorder
	parent := r.Context().Plugin(core.Define("parent", func(c *core.Context, _ struct{}) error {
		_ = c.Effect("parent-first", func() (func(), error) { return func() { rec.add("parent-first undone") }, nil })
		c.Plugin(core.Define("child", func(c *core.Context, _ struct{}) error {
			return core.Go(c, func(ctx context.Context) error {
				<-ctx.Done()
				<-release
				rec.add("child goroutine returned")
				return nil
			})
		}), nil)
		return nil
	}), nil)
	ctx := deadline(t)
	if err := parent.Await(ctx); err != nil {
		t.Fatal(err)
	}
	child := parent.Children()[0]
	if err := child.Await(ctx); err != nil {
		t.Fatal(err)
	}
	_ = parent.Dispose(ctx)
	if got := rec.get(); len(got) != 0 {
		t.Fatalf("undone before the child's goroutine returned: %v", got)
	}
	close(release)
	<-parent.Done()
	if got := rec.get(); !slices.Equal(got, []string{"child goroutine returned", "parent-first undone"}) {
		t.Fatalf("order %v", got)
	}
	if child.State() != core.StateDisposed {
		t.Fatalf("child %v", child.State())
	}
}

// A provider's other disposers run after a dependent whose unload parked
// at its goroutine has finished with the service.
func TestProviderWaitsForAParkedDependent(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	release := make(chan struct{})
	var rec recorder
	prov := r.Context().Plugin(core.Define("prov", func(c *core.Context, _ struct{}) error {
		_ = c.Effect("socket", func() (func(), error) { return func() { rec.add("provider closed") }, nil })
		return core.Provide(c, greeterKey, &greeter{"hi"})
	}), nil)
	dep := r.Context().Plugin(core.Define("dep", func(c *core.Context, _ struct{}) error {
		g := core.Use(c, greeterKey)
		return core.Go(c, func(ctx context.Context) error {
			<-ctx.Done()
			<-release
			rec.add("dependent done with " + g.greeting)
			return nil
		})
	}, core.WithInject("greeter")), nil)
	ctx := deadline(t)
	if err := dep.Await(ctx); err != nil || dep.State() != core.StateActive {
		t.Fatalf("dep %v %v", dep.State(), err)
	}
	_ = prov.Dispose(ctx)
	close(release)
	if err := prov.Await(ctx); err != nil {
		t.Fatal(err)
	}
	if got := rec.get(); !slices.Equal(got, []string{"dependent done with hi", "provider closed"}) {
		t.Fatalf("order %v", got)
	}
	if err := dep.Await(ctx); err != nil || dep.State() != core.StatePending {
		t.Fatalf("dep %v %v", dep.State(), err)
	}
}

func TestDoneAndErrReportTheDisposal(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	f := r.Context().Plugin(core.Define("p", func(c *core.Context, _ struct{}) error {
		return c.Effect("bad", func() (func(), error) { return func() { panic("disposer exploded") }, nil })
	}), nil)
	done := f.Done()
	select {
	case <-done:
		t.Fatal("done before disposal")
	default:
	}
	_ = f.Dispose(deadline(t))
	<-done
	var pe *core.PanicError
	if err := f.Err(); !errors.As(err, &pe) || f.Await(deadline(t)) == nil {
		t.Fatalf("err = %v", err)
	}
	// A fiber refused by an inactive parent is done at once.
	refused := f.Context().Plugin(core.Define("late", func(*core.Context, struct{}) error { return nil }), nil)
	select {
	case <-refused.Done():
	default:
		t.Fatal("refused fiber not done")
	}
	if !errors.Is(refused.Err(), core.ErrInactive) {
		t.Fatal(refused.Err())
	}
}

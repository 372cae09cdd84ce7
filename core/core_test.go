package core_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newRoot(t testing.TB) *core.Root {
	t.Helper()
	r := core.NewRoot(core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(func() { _ = r.Dispose(context.Background()) })
	return r
}

// recorder collects events in order, safely.
type recorder struct {
	mu  sync.Mutex
	log []string
}

func (r *recorder) add(s string) { r.mu.Lock(); r.log = append(r.log, s); r.mu.Unlock() }
func (r *recorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.log)
}

func TestEffectsAreUndoneLIFOExactlyOnce(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	var rec recorder
	p := core.Define("p", func(c *core.Context, _ struct{}) error {
		for _, n := range []string{"a", "b", "c"} {
			if err := c.Effect(n, func() (func(), error) { return func() { rec.add(n) }, nil }); err != nil {
				return err
			}
		}
		c.Plugin(core.Define("child", func(c *core.Context, _ struct{}) error {
			return c.Effect("child-x", func() (func(), error) { return func() { rec.add("child-x") }, nil })
		}), nil)
		return c.Effect("d", func() (func(), error) { return func() { rec.add("d") }, nil })
	})
	f := r.Context().Plugin(p, nil)
	if err := f.Await(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f.State() != core.StateActive {
		t.Fatalf("state = %v", f.State())
	}
	if err := f.Dispose(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := f.Dispose(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"d", "child-x", "c", "b", "a"}
	if got := rec.get(); !slices.Equal(got, want) {
		t.Fatalf("dispose order = %v, want %v", got, want)
	}
	if f.State() != core.StateDisposed {
		t.Fatalf("state = %v", f.State())
	}
}

func TestDisposeRunsEveryDisposerAndJoinsErrors(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	var rec recorder
	p := core.Define("p", func(c *core.Context, _ struct{}) error {
		_ = c.Effect("a", func() (func(), error) { return func() { rec.add("a") }, nil })
		_ = c.Effect("boom", func() (func(), error) { return func() { panic("disposer exploded") }, nil })
		_ = c.Effect("c", func() (func(), error) { return func() { rec.add("c") }, nil })
		return nil
	})
	f := r.Context().Plugin(p, nil)
	err := f.Dispose(context.Background())
	if err == nil || !strings.Contains(err.Error(), "disposer exploded") {
		t.Fatalf("err = %v", err)
	}
	if got := rec.get(); !slices.Equal(got, []string{"c", "a"}) {
		t.Fatalf("got %v", got)
	}
}

func TestApplyErrorAndPanicAreContained(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		fail func() error
		want string
	}{
		{"error", func() error { return errors.New("apply failed") }, "apply failed"},
		{"panic", func() error { var m map[string]int; m["x"] = 1; return nil }, "assignment to entry in nil map"}, //nolint:staticcheck // the nil-map write is the panic under test
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newRoot(t)
			var rec recorder
			bad := core.Define("bad", func(c *core.Context, _ struct{}) error {
				_ = c.Effect("partial", func() (func(), error) { return func() { rec.add("rolled back") }, nil })
				return tc.fail()
			})
			good := core.Define("good", func(c *core.Context, _ struct{}) error { return nil })
			parent := core.Define("parent", func(c *core.Context, _ struct{}) error {
				c.Plugin(bad, nil)
				c.Plugin(good, nil)
				return nil
			})
			pf := r.Context().Plugin(parent, nil)
			if err := pf.Await(context.Background()); err != nil {
				t.Fatal(err)
			}
			kids := pf.Children()
			if len(kids) != 2 {
				t.Fatalf("children = %d", len(kids))
			}
			err := kids[0].Await(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("bad err = %v", err)
			}
			if kids[0].State() != core.StateFailed || kids[1].State() != core.StateActive || pf.State() != core.StateActive {
				t.Fatalf("states: bad=%v good=%v parent=%v", kids[0].State(), kids[1].State(), pf.State())
			}
			if got := rec.get(); !slices.Equal(got, []string{"rolled back"}) {
				t.Fatalf("rollback = %v", got)
			}
		})
	}
}

type greeter struct{ greeting string }

var greeterKey = core.NewKey[*greeter]("greeter")

func TestPendingUntilServiceAppearsAndBackWhenItGoes(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	var rec recorder
	consumer := core.Define("consumer", func(c *core.Context, _ struct{}) error {
		g := core.Use(c, greeterKey)
		rec.add("apply " + g.greeting)
		return c.Effect("x", func() (func(), error) { return func() { rec.add("consumer undone") }, nil })
	}, core.WithInject("greeter"))
	provider := core.Define("provider", func(c *core.Context, cfg struct{ Greeting string }) error {
		if err := core.Provide(c, greeterKey, &greeter{cfg.Greeting}); err != nil {
			return err
		}
		return c.Effect("db", func() (func(), error) { return func() { rec.add("provider undone") }, nil })
	})
	cf := r.Context().Plugin(consumer, nil)
	if cf.State() != core.StatePending || !slices.Equal(cf.PendingOn(), []string{"greeter"}) {
		t.Fatalf("state %v pendingOn %v", cf.State(), cf.PendingOn())
	}
	pf := r.Context().Plugin(provider, struct{ Greeting string }{"hi"})
	if cf.State() != core.StateActive {
		t.Fatalf("consumer state = %v", cf.State())
	}
	if err := pf.Update(context.Background(), struct{ Greeting string }{"hello"}); err != nil {
		t.Fatal(err)
	}
	if err := pf.Dispose(context.Background()); err != nil {
		t.Fatal(err)
	}
	if cf.State() != core.StatePending {
		t.Fatalf("consumer state after withdraw = %v", cf.State())
	}
	want := []string{"apply hi", "consumer undone", "provider undone", "apply hello", "consumer undone", "provider undone"}
	if got := rec.get(); !slices.Equal(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

func TestDuplicateServiceFailsTheSecondProvider(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	prov := core.Define("prov", func(c *core.Context, _ struct{}) error {
		return core.Provide(c, greeterKey, &greeter{})
	})
	a := r.Context().Plugin(prov, nil)
	b := r.Context().Plugin(prov, nil)
	if a.State() != core.StateActive {
		t.Fatal(a.State())
	}
	if err := b.Await(context.Background()); !errors.Is(err, core.ErrDuplicateService) {
		t.Fatalf("err = %v", err)
	}
}

func TestUseWithoutInjectIsContained(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	p := core.Define("p", func(c *core.Context, _ struct{}) error {
		core.Use(c, greeterKey)
		return nil
	})
	f := r.Context().Plugin(p, nil)
	if err := f.Await(context.Background()); !errors.Is(err, core.ErrNotInjected) {
		t.Fatalf("err = %v", err)
	}
}

var wf = core.NewWaterfallEvent[int, string]("test/wf")

func TestWaterfallOrderShortCircuitAndErrors(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	c := r.Context()
	ctx := context.Background()
	inner := func(ctx context.Context, p int) (string, error) { return fmt.Sprint("inner", p), nil }
	add := func(tag string) func(context.Context, int, core.Next[int, string]) (string, error) {
		return func(ctx context.Context, p int, next core.Next[int, string]) (string, error) {
			s, err := next(ctx, p+1)
			return tag + "(" + s + ")", err
		}
	}
	plug := func(opts []core.ListenOption, h func(context.Context, int, core.Next[int, string]) (string, error)) *core.Fiber {
		return c.Plugin(core.Define("l", func(c *core.Context, _ struct{}) error { return core.On(c, wf, h, opts...) }), nil)
	}
	a := plug(nil, add("a"))
	plug(nil, add("b"))
	plug([]core.ListenOption{core.Prepend()}, add("first"))
	got, err := wf.Run(ctx, c.Here(), 1, inner)
	if err != nil || got != "first(a(b(inner4)))" {
		t.Fatalf("got %q %v", got, err)
	}
	_ = a.Dispose(ctx)
	got, _ = wf.Run(ctx, c.Here(), 1, inner)
	if got != "first(b(inner3))" {
		t.Fatalf("after dispose got %q", got)
	}
	var ran bool
	plug(nil, func(ctx context.Context, p int, next core.Next[int, string]) (string, error) { return "veto", nil })
	plug(nil, func(ctx context.Context, p int, next core.Next[int, string]) (string, error) {
		ran = true
		return next(ctx, p)
	})
	got, _ = wf.Run(ctx, c.Here(), 1, inner)
	if got != "first(b(veto))" || ran {
		t.Fatalf("short-circuit got %q ran=%v", got, ran)
	}
}

func TestWaterfallPanicPropagatesAsError(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	c := r.Context()
	c.Plugin(core.Define("hook", func(c *core.Context, _ struct{}) error {
		return core.On(c, wf, func(ctx context.Context, p int, next core.Next[int, string]) (string, error) {
			panic("hook exploded")
		})
	}), nil)
	innerRan := false
	_, err := wf.Run(context.Background(), c.Here(), 1, func(ctx context.Context, p int) (string, error) {
		innerRan = true
		return "", nil
	})
	var pe *core.PanicError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "hook exploded") || innerRan {
		t.Fatalf("err = %v innerRan=%v", err, innerRan)
	}
}

var emitEv = core.NewEmitEvent[string]("test/emit")

func TestEmitContainsFailuresAndSnapshotsListeners(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	c := r.Context()
	var rec recorder
	c.Plugin(core.Define("a", func(c *core.Context, _ struct{}) error {
		return core.On(c, emitEv, func(ctx context.Context, p string) error { panic("observer exploded") })
	}), nil)
	c.Plugin(core.Define("b", func(c *core.Context, _ struct{}) error {
		return core.On(c, emitEv, func(ctx context.Context, p string) error { return errors.New("fails") })
	}), nil)
	c.Plugin(core.Define("c", func(outer *core.Context, _ struct{}) error {
		return core.On(outer, emitEv, func(ctx context.Context, p string) error {
			rec.add("c " + p)
			// Registered during dispatch: not called in this one.
			return core.On(outer, emitEv, func(ctx context.Context, p string) error { rec.add("late " + p); return nil })
		})
	}), nil)
	emitEv.Emit(context.Background(), c.Here(), "x")
	if got := rec.get(); !slices.Equal(got, []string{"c x"}) {
		t.Fatalf("got %v", got)
	}
}

var bailEv = core.NewBailEvent[int, string]("test/bail")

func TestBailStopsAtFirstHandledOrError(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	c := r.Context()
	c.Plugin(core.Define("skip", func(c *core.Context, _ struct{}) error {
		return core.On(c, bailEv, func(ctx context.Context, p int) (string, bool, error) { return "", false, nil })
	}), nil)
	c.Plugin(core.Define("zero", func(c *core.Context, _ struct{}) error {
		return core.On(c, bailEv, func(ctx context.Context, p int) (string, bool, error) {
			if p == 0 {
				return "", true, nil // an empty result still bails
			}
			if p < 0 {
				return "", false, errors.New("negative")
			}
			return "", false, nil
		})
	}), nil)
	c.Plugin(core.Define("last", func(c *core.Context, _ struct{}) error {
		return core.On(c, bailEv, func(ctx context.Context, p int) (string, bool, error) { return "last", true, nil })
	}), nil)
	for _, tc := range []struct {
		in      int
		want    string
		handled bool
		err     bool
	}{{0, "", true, false}, {1, "last", true, false}, {-1, "", false, true}} {
		got, handled, err := bailEv.Bail(context.Background(), c.Here(), tc.in)
		if got != tc.want || handled != tc.handled || (err != nil) != tc.err {
			t.Errorf("Bail(%d) = %q %v %v", tc.in, got, handled, err)
		}
	}
}

func TestScopedListenersHearOnlyTheirScopeAndDescendants(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	c := r.Context()
	var rec recorder
	preset := core.NewScopeID("preset", nil)
	agentA := core.NewScopeID("a", preset)
	agentB := core.NewScopeID("b", preset)
	mk := func(c *core.Context, tag string, opts ...core.ListenOption) {
		if err := core.On(c, emitEv, func(ctx context.Context, p string) error { rec.add(tag + ":" + p); return nil }, opts...); err != nil {
			t.Fatal(err)
		}
	}
	sp, _ := core.NewScope(c, preset)
	sa, _ := core.NewScope(c, agentA)
	sb, _ := core.NewScope(c, agentB)
	mk(c, "global")
	mk(sp.Context(), "preset")
	mk(sa.Context(), "a")
	mk(sb.Context(), "b")
	mk(sb.Context(), "b-global", core.Global())
	for _, tg := range []core.Target{c.To(agentA), c.To(agentB), c.Here()} {
		emitEv.Emit(context.Background(), tg, tg.Scope().Label())
	}
	want := []string{"global:a", "preset:a", "a:a", "b-global:a", "global:b", "preset:b", "b:b", "b-global:b", "global:", "b-global:"}
	if got := rec.get(); !slices.Equal(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	if err := sb.Dispose(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := core.Listeners(c, core.Event[func(context.Context, string) error](emitEv)); n != 3 {
		t.Fatalf("listeners after scope dispose = %d", n)
	}
}

func TestGoroutinePanicFailsOnlyItsPlugin(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	var rec recorder
	started := make(chan struct{})
	p := core.Define("worker", func(c *core.Context, _ struct{}) error {
		_ = c.Effect("res", func() (func(), error) { return func() { rec.add("cleaned") }, nil })
		return core.Go(c, func(ctx context.Context) error {
			close(started)
			panic("goroutine exploded")
		})
	})
	sib := r.Context().Plugin(core.Define("sibling", func(c *core.Context, _ struct{}) error { return nil }), nil)
	f := r.Context().Plugin(p, nil)
	<-started
	deadline := time.Now().Add(5 * time.Second)
	for f.State() != core.StateFailed && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if f.State() != core.StateFailed || !strings.Contains(f.Err().Error(), "goroutine exploded") {
		t.Fatalf("state %v err %v", f.State(), f.Err())
	}
	if sib.State() != core.StateActive {
		t.Fatal("sibling affected")
	}
	if got := rec.get(); !slices.Equal(got, []string{"cleaned"}) {
		t.Fatalf("got %v", got)
	}
}

func TestGoroutineIsAwaitedOnUnload(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	var rec recorder
	p := core.Define("worker", func(c *core.Context, _ struct{}) error {
		return core.Go(c, func(ctx context.Context) error {
			<-ctx.Done()
			time.Sleep(20 * time.Millisecond)
			rec.add("goroutine done")
			return ctx.Err()
		})
	})
	f := r.Context().Plugin(p, nil)
	// Dispose does not wait for the goroutine (the unload parks at it and
	// resumes when it returns); Await and Done do.
	if err := f.Dispose(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := f.Await(context.Background()); err != nil || f.State() != core.StateDisposed {
		t.Fatalf("await: %v, state %v", err, f.State())
	}
	if got := rec.get(); !slices.Equal(got, []string{"goroutine done"}) {
		t.Fatalf("got %v", got)
	}
}

func TestEffectOnDisposedFiberIsInactive(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	var saved *core.Context
	f := r.Context().Plugin(core.Define("p", func(c *core.Context, _ struct{}) error { saved = c; return nil }), nil)
	_ = f.Dispose(context.Background())
	called := false
	err := saved.Effect("late", func() (func(), error) { called = true; return nil, nil })
	if !errors.Is(err, core.ErrInactive) || called {
		t.Fatalf("err=%v called=%v", err, called)
	}
	if saved.Context().Err() == nil {
		t.Fatal("activation context not cancelled")
	}
}

type cfgV struct{ N int }

func (c cfgV) Validate() error {
	if c.N < 0 {
		return &core.ConfigError{Issues: []core.Issue{{Path: "n", Message: "must not be negative"}}}
	}
	return nil
}

func TestUpdateValidatesBeforeRestarting(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	var rec recorder
	p := core.Define("p", func(c *core.Context, cfg cfgV) error { rec.add(fmt.Sprint(cfg.N)); return nil })
	f := r.Context().Plugin(p, cfgV{1})
	err := f.Update(context.Background(), cfgV{-1})
	var ce *core.ConfigError
	if !errors.As(err, &ce) || ce.Error() != "invalid config: n: must not be negative" {
		t.Fatalf("err = %v", err)
	}
	if f.State() != core.StateActive {
		t.Fatal(f.State())
	}
	_ = f.Update(context.Background(), cfgV{2})
	if got := rec.get(); !slices.Equal(got, []string{"1", "2"}) {
		t.Fatalf("got %v", got)
	}
}

func TestDisposeFromInsideApply(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	var self *core.Fiber
	p := core.Define("self", func(c *core.Context, _ struct{}) error {
		self = c.Fiber()
		return self.Dispose(context.Background())
	})
	f := r.Context().Plugin(p, nil)
	if err := f.Await(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f.State() != core.StateDisposed {
		t.Fatal(f.State())
	}
}

func TestStatusChangesAreObservable(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	var rec recorder
	r.Context().Plugin(core.Define("observer", func(c *core.Context, _ struct{}) error {
		return core.On(c, core.StatusChanged, func(_ context.Context, s core.StatusChange) error {
			if s.Plugin == "observed" {
				rec.add(fmt.Sprintf("%v→%v%v", s.From, s.To, s.PendingOn))
			}
			return nil
		})
	}), nil)
	f := r.Context().Plugin(core.Define("observed", func(*core.Context, struct{}) error { return nil }, core.WithInject("greeter")), nil)
	p := r.Context().Plugin(core.Define("prov", func(c *core.Context, _ struct{}) error { return core.Provide(c, greeterKey, &greeter{}) }), nil)
	_ = p.Dispose(context.Background())
	_ = f.Dispose(context.Background())
	want := []string{"pending→pending[greeter]", "pending→loading[]", "loading→active[]", "active→pending[]", "pending→pending[greeter]", "pending→disposed[greeter]"}
	if got := rec.get(); !slices.Equal(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

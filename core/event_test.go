package core_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/dshgo/harness/core"
)

var wfRetry = core.NewWaterfallEvent[int, string]("test/wf-retry")

// A listener may call next more than once (retry), and a panic below it
// reaches it as a *PanicError naming the panicking listener's plugin.
func TestWaterfallRetryAndNestedPanic(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	c := r.Context()
	ctx := context.Background()
	c.Plugin(core.Define("retry", func(c *core.Context, _ struct{}) error {
		return core.On(c, wfRetry, func(ctx context.Context, p int, next core.Next[int, string]) (string, error) {
			s1, err1 := next(ctx, p)
			s2, err2 := next(ctx, p+10)
			var pe *core.PanicError
			if p < 0 && errors.As(err1, &pe) && errors.As(err2, &pe) {
				return "recovered:" + err1.Error(), nil
			}
			return s1 + "," + s2, errors.Join(err1, err2)
		})
	}), nil)
	c.Plugin(core.Define("mid", func(c *core.Context, _ struct{}) error {
		return core.On(c, wfRetry, func(ctx context.Context, p int, next core.Next[int, string]) (string, error) {
			s, err := next(ctx, p+1)
			return "m" + s, err
		})
	}), nil)
	c.Plugin(core.Define("bomb", func(c *core.Context, _ struct{}) error {
		return core.On(c, wfRetry, func(ctx context.Context, p int, next core.Next[int, string]) (string, error) {
			if p < 0 {
				panic("boom")
			}
			return next(ctx, p)
		})
	}), nil)
	inner := func(ctx context.Context, p int) (string, error) { return fmt.Sprint(p), nil }
	got, err := wfRetry.Run(ctx, c.Here(), 1, inner)
	if err != nil || got != "m2,m12" {
		t.Fatalf("retry got %q %v", got, err)
	}
	got, err = wfRetry.Run(ctx, c.Here(), -50, inner)
	if err != nil || !strings.Contains(got, `plugin "bomb"`) || !strings.Contains(got, "boom") {
		t.Fatalf("nested panic got %q %v", got, err)
	}
}

var bailPanic = core.NewBailEvent[int, int]("test/bail-panic")

func TestBailPanicNamesPlugin(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	c := r.Context()
	c.Plugin(core.Define("bomb", func(c *core.Context, _ struct{}) error {
		return core.On(c, bailPanic, func(ctx context.Context, p int) (int, bool, error) { panic("boom") })
	}), nil)
	got, handled, err := bailPanic.Bail(context.Background(), c.Here(), 1)
	var pe *core.PanicError
	if got != 0 || handled || !errors.As(err, &pe) || !strings.Contains(err.Error(), `plugin "bomb"`) {
		t.Fatalf("got %v %v %v", got, handled, err)
	}
}

var wfShared = core.NewWaterfallEvent[int, int]("test/wf-shared")

// One event dispatched in several roots at once sees each root's own
// listeners only.
func TestEventSharedAcrossRoots(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const roots = 4
	cs := make([]*core.Context, roots)
	for i := range cs {
		cs[i] = newRoot(t).Context()
		for range i {
			cs[i].Plugin(core.Define("add", func(c *core.Context, _ struct{}) error {
				return core.On(c, wfShared, func(ctx context.Context, p int, next core.Next[int, int]) (int, error) {
					return next(ctx, p+1)
				})
			}), nil)
		}
	}
	inner := func(ctx context.Context, p int) (int, error) { return p, nil }
	var wg sync.WaitGroup
	errs := make(chan error, roots)
	for i, c := range cs {
		wg.Go(func() {
			for range 200 {
				if got, err := wfShared.Run(ctx, c.Here(), 0, inner); got != i || err != nil {
					errs <- fmt.Errorf("root %d: got %d %v", i, got, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

var wfSkip = core.NewWaterfallEvent[int, string]("test/wf-skip")

// Listeners skipped by one dispatch (scope filtering) are admitted again by
// the next: dispatch state carries nothing over.
func TestWaterfallSkipsDoNotCarryOver(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	c := r.Context()
	ctx := context.Background()
	s, err := core.NewScope(c, core.NewScopeID("agent", nil))
	if err != nil {
		t.Fatal(err)
	}
	tag := func(name string) func(context.Context, int, core.Next[int, string]) (string, error) {
		return func(ctx context.Context, p int, next core.Next[int, string]) (string, error) {
			rest, err := next(ctx, p)
			return name + rest, err
		}
	}
	if err := core.On(s.Context(), wfSkip, tag("s1")); err != nil {
		t.Fatal(err)
	}
	if err := core.On(c, wfSkip, tag("g")); err != nil {
		t.Fatal(err)
	}
	if err := core.On(s.Context(), wfSkip, tag("s2")); err != nil {
		t.Fatal(err)
	}
	inner := func(ctx context.Context, p int) (string, error) { return ".", nil }
	for _, want := range []struct {
		t   core.Target
		out string
	}{{c.Here(), "g."}, {c.To(s.ID()), "s1gs2."}, {c.Here(), "g."}, {c.To(s.ID()), "s1gs2."}} {
		if got, err := wfSkip.Run(ctx, want.t, 0, inner); got != want.out || err != nil {
			t.Fatalf("got %q %v, want %q", got, err, want.out)
		}
	}
}

var (
	noTargetBail = core.NewBailEvent[int, int]("test/no-target-bail")
	noTargetWF   = core.NewWaterfallEvent[int, int]("test/no-target-wf")
)

// A dispatch needs a Target made by a Context: the zero Target is an
// ErrNoTarget error for Bail and Run (a policy waterfall never runs inner
// without its listeners), and reaches no listener for Emit.
func TestZeroTargetIsRefused(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	ctx := context.Background()
	if _, handled, err := noTargetBail.Bail(ctx, core.Target{}, 1); handled || !errors.Is(err, core.ErrNoTarget) {
		t.Fatalf("Bail: handled %v err %v", handled, err)
	}
	ran := false
	_, err := noTargetWF.Run(ctx, core.Target{}, 1, func(context.Context, int) (int, error) { ran = true; return 1, nil })
	if ran || !errors.Is(err, core.ErrNoTarget) || err.Error() != "event test/no-target-wf: dispatch to the zero Target" {
		t.Fatalf("Run: inner ran %v, err %v", ran, err)
	}
	if got, err := noTargetWF.Run(ctx, r.Context().Here(), 1, func(context.Context, int) (int, error) { return 7, nil }); got != 7 || err != nil {
		t.Fatalf("Run with Here: %d %v", got, err)
	}
}

package core_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/dshgo/harness/core"
)

// An effect registered inside another effect's body is undone before it:
// disposal is strict reverse order of acquisition, where an effect is
// acquired when its body starts.
func TestNestedEffectsAreUndoneLIFO(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	var got []int
	rec := func(n int) func() { return func() { got = append(got, n) } }
	f := r.Context().Plugin(core.Define("nest", func(c *core.Context, _ struct{}) error {
		if err := c.Effect("1", func() (func(), error) { return rec(1), nil }); err != nil {
			return err
		}
		return c.Effect("2", func() (func(), error) {
			if err := c.Effect("3", func() (func(), error) { return rec(3), nil }); err != nil {
				return nil, err
			}
			return rec(2), nil
		})
	}), nil)
	if err := f.Dispose(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []int{3, 2, 1}; !slices.Equal(got, want) {
		t.Fatalf("undo order %v, want %v", got, want)
	}
}

// A body that fails rolls back what it acquired, nested effects included,
// newest first, and nothing of it stays registered.
func TestFailedEffectBodyRollsBackNestedEffects(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	var got []int
	rec := func(n int) func() { return func() { got = append(got, n) } }
	boom := errors.New("boom")
	var labels []string
	f := r.Context().Plugin(core.Define("nest", func(c *core.Context, _ struct{}) error {
		if err := c.Effect("1", func() (func(), error) { return rec(1), nil }); err != nil {
			return err
		}
		err := c.Effect("2", func() (func(), error) {
			_ = c.Effect("3", func() (func(), error) { return rec(3), nil })
			_ = c.Effect("4", func() (func(), error) { return rec(4), nil })
			return rec(2), boom
		})
		if !errors.Is(err, boom) {
			t.Errorf("effect error %v", err)
		}
		labels = c.Fiber().Effects()
		return nil
	}), nil)
	if err := f.Await(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []int{4, 3, 2}; !slices.Equal(got, want) {
		t.Fatalf("rollback order %v, want %v", got, want)
	}
	if !slices.Equal(labels, []string{"1"}) {
		t.Fatalf("effects left after the failed body: %v", labels)
	}
}

// Mounting on an inactive context returns a disposed fiber whose Err is
// ErrInactive, so a refused mount is told apart from a normal one.
func TestPluginOnInactiveContextErrIsErrInactive(t *testing.T) {
	t.Parallel()
	r := newRoot(t)
	var inner *core.Context
	f := r.Context().Plugin(core.Define("outer", func(c *core.Context, _ struct{}) error { inner = c; return nil }), nil)
	if err := f.Dispose(context.Background()); err != nil {
		t.Fatal(err)
	}
	child := inner.Plugin(core.Define("child", func(*core.Context, struct{}) error { return nil }), nil)
	if child.State() != core.StateDisposed || !errors.Is(child.Err(), core.ErrInactive) {
		t.Fatalf("state %v err %v", child.State(), child.Err())
	}
	if f.Err() != nil {
		t.Fatalf("a normally disposed fiber reports %v", f.Err())
	}
}

package core_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/dshgo/harness/core"
)

var (
	benchEmit = core.NewEmitEvent[int]("bench/emit")
	benchBail = core.NewBailEvent[int, int]("bench/bail")
	benchWF   = core.NewWaterfallEvent[int, int]("bench/waterfall")
)

func benchRoot(b *testing.B, listeners int) *core.Context {
	r := newRoot(b)
	c := r.Context()
	for i := 0; i < listeners; i++ {
		c.Plugin(core.Define("l", func(c *core.Context, _ struct{}) error {
			if err := core.On(c, benchEmit, func(ctx context.Context, p int) error { return nil }); err != nil {
				return err
			}
			if err := core.On(c, benchBail, func(ctx context.Context, p int) (int, bool, error) { return 0, false, nil }); err != nil {
				return err
			}
			return core.On(c, benchWF, func(ctx context.Context, p int, next core.Next[int, int]) (int, error) {
				return next(ctx, p+1)
			})
		}), nil)
	}
	return c
}

func BenchmarkDispatch(b *testing.B) {
	ctx := context.Background()
	inner := func(ctx context.Context, p int) (int, error) { return p, nil }
	for _, n := range []int{0, 1, 10} {
		c := benchRoot(b, n)
		b.Run(fmt.Sprintf("Emit/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				benchEmit.Emit(ctx, c.Here(), 1)
			}
		})
		b.Run(fmt.Sprintf("Bail/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _, _ = benchBail.Bail(ctx, c.Here(), 1)
			}
		})
		b.Run(fmt.Sprintf("Waterfall/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = benchWF.Run(ctx, c.Here(), 1, inner)
			}
		})
	}
}

func BenchmarkServiceLookup(b *testing.B) {
	r := newRoot(b)
	c := r.Context()
	c.Plugin(core.Define("prov", func(c *core.Context, _ struct{}) error {
		return core.Provide(c, greeterKey, &greeter{"hi"})
	}), nil)
	b.Run("Lookup", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := core.Lookup(c, greeterKey); !ok {
				b.Fatal("missing")
			}
		}
	})
	var user *core.Context
	c.Plugin(core.Define("user", func(c *core.Context, _ struct{}) error { user = c; return nil }, core.WithInject("greeter")), nil)
	b.Run("Use", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = core.Use(user, greeterKey)
		}
	})
}

func BenchmarkProvideWithdraw(b *testing.B) {
	r := newRoot(b)
	var pc *core.Context
	host := r.Context().Plugin(core.Define("host", func(c *core.Context, _ struct{}) error { pc = c; return nil }), nil)
	_ = host
	b.ReportAllocs()
	for b.Loop() {
		s, err := core.NewScope(pc, core.NewScopeID("s", nil))
		if err != nil {
			b.Fatal(err)
		}
		if err := core.Provide(s.Context(), greeterKey, &greeter{}); err != nil {
			b.Fatal(err)
		}
		if err := s.Dispose(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkApplyDispose(b *testing.B) {
	r := newRoot(b)
	c := r.Context()
	p := core.Define("p", func(c *core.Context, _ struct{}) error {
		if err := c.Effect("e", func() (func(), error) { return func() {}, nil }); err != nil {
			return err
		}
		return core.On(c, benchEmit, func(ctx context.Context, p int) error { return nil })
	})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		f := c.Plugin(p, nil)
		if err := f.Dispose(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

//nolint:unused // the fields are there for the struct's size (112 bytes)
type result112 struct {
	a, b, c, d, e, f int64  // 48 bytes
	s1, s2, s3       string // 48 bytes
	x, y             int64  // 16 bytes
}

var (
	benchWF8   = core.NewWaterfallEvent[int, int64]("bench/waterfall8")
	benchWF112 = core.NewWaterfallEvent[int, result112]("bench/waterfall112")
)

// BenchmarkWaterfall measures one scoped waterfall dispatch through 0, 1 and
// 10 pass-through listeners, with an 8-byte and a 112-byte result.
func BenchmarkWaterfall(b *testing.B) {
	ctx := context.Background()
	inner8 := func(ctx context.Context, p int) (int64, error) { return int64(p), nil }
	inner112 := func(ctx context.Context, p int) (result112, error) { return result112{a: int64(p)}, nil }
	for _, n := range []int{0, 1, 10} {
		r := newRoot(b)
		c := r.Context()
		for i := 0; i < n; i++ {
			c.Plugin(core.Define("l", func(c *core.Context, _ struct{}) error {
				if err := core.On(c, benchWF8, func(ctx context.Context, p int, next core.Next[int, int64]) (int64, error) {
					return next(ctx, p+1)
				}); err != nil {
					return err
				}
				return core.On(c, benchWF112, func(ctx context.Context, p int, next core.Next[int, result112]) (result112, error) {
					return next(ctx, p+1)
				})
			}), nil)
		}
		t := c.To(core.NewScopeID("s", nil))
		b.Run(fmt.Sprintf("8B/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = benchWF8.Run(ctx, t, 1, inner8)
			}
		})
		b.Run(fmt.Sprintf("112B/%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = benchWF112.Run(ctx, t, 1, inner112)
			}
		})
	}
}

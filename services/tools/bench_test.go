package tools_test

import (
	"context"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/tools"
)

type noArgs struct{}

// BenchmarkPipeline measures one no-op call through the whole pipeline
// (arguments "" take the validated-once fast path, so validation is excluded).
func BenchmarkPipeline(b *testing.B) {
	for _, n := range []int{0, 10} {
		b.Run(map[int]string{0: "listeners=0", 10: "pre=10,post=10"}[n], func(b *testing.B) {
			e := newEnv(b)
			e.register(tools.Define("noop", "does nothing", func(context.Context, *tools.Execution, noArgs) (string, error) { return "ok", nil }))
			for range n {
				e.on(core.On(e.c, tools.PreExecute, func(ctx context.Context, x *tools.Execution, next core.Next[*tools.Execution, tools.Decision]) (tools.Decision, error) {
					return next(ctx, x)
				}))
				e.on(core.On(e.c, tools.PostExecute, func(ctx context.Context, x *tools.Execution, next core.Next[*tools.Execution, tools.PostDecision]) (tools.PostDecision, error) {
					return next(ctx, x)
				}))
			}
			ctx := context.Background()
			call := tools.Call{ID: "c", Name: "noop"}
			b.ReportAllocs()
			stop := tools.CPUTimer(b)
			for b.Loop() {
				if o := e.reg.Execute(ctx, call); o.IsError {
					b.Fatal(tools.TextOf(o.Content))
				}
			}
			stop()
		})
	}
}

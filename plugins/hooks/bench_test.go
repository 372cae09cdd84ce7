package hooks_test

import (
	"testing"

	"github.com/dshgo/harness/internal/policytest"
	"github.com/dshgo/harness/plugins/hooks"
)

// BenchmarkPreToolUseHook measures one bash call through the registry with N
// PreToolUse hooks (each `cat >/dev/null`, run in parallel) against none: the
// difference is the cost of spawning hooks per call.
func BenchmarkPreToolUseHook(b *testing.B) {
	for _, n := range []int{0, 1, 4} {
		b.Run(map[int]string{0: "hooks=0", 1: "hooks=1", 4: "hooks=4"}[n], func(b *testing.B) {
			dir := b.TempDir()
			var extra []policytest.Mount
			if n > 0 {
				g := hooks.MatcherGroup{}
				for i := range n {
					g.Hooks = append(g.Hooks, hooks.CommandHook{Command: "cat >/dev/null; : " + string(rune('a'+i))})
				}
				extra = append(extra, policytest.Mount{Plugin: hooks.Plugin, Config: hooks.Config{Cwd: dir, Hooks: hooks.Events{PreToolUse: []hooks.MatcherGroup{g}}}})
			}
			reg := policytest.Harness(b, extra...)
			b.ReportAllocs()
			for b.Loop() {
				if o := policytest.Run(reg, "c", "true"); o.IsError {
					b.Fatal(policytest.Text(o))
				}
			}
		})
	}
}

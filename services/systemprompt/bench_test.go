package systemprompt

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkAssembleRender measures one agent step's prompt work: Assemble
// and Render with 50 sections (half static templates referencing variables,
// half computed), 20 tools and 10 variables. Besides ns/op it reports
// cpu-ns/op, the benchmark thread's CPU time per op.
func BenchmarkAssembleRender(b *testing.B) {
	cfg := DefaultConfig()
	cfg.PersonaPrefix = "You are {{v0}}, a careful engineer."
	cfg.PersonaSuffix = "Working directory: {{v1}}"
	h := mount(b, cfg)
	for i := range 10 {
		h.must(h.svc.Variable(h.global(), fmt.Sprintf("v%d", i), value(fmt.Sprintf("value-%d", i))))
	}
	for i := range 50 {
		s := Section{Name: fmt.Sprintf("section:%02d", i), Order: float64(1000 + i*10)}
		if i%2 == 0 {
			s.Text = fmt.Sprintf("Guidance %d uses {{v%d}} and {{v%d}}; keep answers short and precise.", i, i%10, (i+3)%10)
		} else {
			s.TextFunc = static(fmt.Sprintf("Computed guidance %d with a literal {{brace}} from runtime data.", i))
		}
		h.must(h.svc.Section(h.global(), s))
	}
	tools := make(StaticTools, 20)
	for i := range tools {
		tools[i] = ToolSchema{Name: fmt.Sprintf("tool_%02d", 19-i), Description: "does a thing",
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}
	}
	h.must(h.svc.Tools(h.global(), tools))
	ctx := context.Background()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, cpuOK := threadCPU()
	for b.Loop() {
		a, err := h.svc.Assemble(ctx, AssembleContext{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Render(a); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time of this thread per op: robust to other processes competing
	// for the cores (GC work on other threads is not included).
	if cpu1, ok := threadCPU(); ok && cpuOK {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
	}
}

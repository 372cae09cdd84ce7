package instructions_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/plugins/instructions"
	"github.com/dshgo/harness/services/systemprompt"
)

// benchTree writes three 20 KB instruction files: the repository root's
// AGENTS.md, a package's AGENTS.md and its CLAUDE.md; it returns the
// package directory (the working directory).
func benchTree(b *testing.B) string {
	dir := b.TempDir()
	para := strings.Repeat("Prefer small functions; run go test ./... before you finish. ", 20) + "\n"
	body := strings.Repeat(para, 20480/len(para)+1)[:20480]
	for _, p := range []string{"AGENTS.md", "pkg/AGENTS.md", "pkg/CLAUDE.md"} {
		path := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	return filepath.Join(dir, "pkg")
}

// BenchmarkPromptStep is one agent step's prompt work with three 20 KB
// instruction files: Assemble and Render through the systemprompt service
// with the instructions section (cached: the files did not change). The
// "uncached" sub-benchmark is the reference: the files loaded and the
// section rendered from scratch each step.
func BenchmarkPromptStep(b *testing.B) {
	cwd := benchTree(b)
	b.Setenv("XDG_CONFIG_HOME", filepath.Join(cwd, "nocfg"))
	b.Run("cached", func(b *testing.B) {
		h := harnesstest.Start(b, "plugins:\n  - name: systemprompt\n  - name: instructions\n")
		sp := harnesstest.Service(b, h, systemprompt.Key)
		ac := systemprompt.AssembleContext{Agent: agentHandle{cwd}}
		b.ReportAllocs()
		defer cpuPerOp(b)()
		for b.Loop() {
			a, err := sp.Assemble(context.Background(), ac)
			if err != nil {
				b.Fatal(err)
			}
			text, err := systemprompt.Render(a)
			if err != nil || len(text) < 3*20480 {
				b.Fatalf("render: %v (%d bytes)", err, len(text))
			}
		}
	})
	b.Run("uncached", func(b *testing.B) {
		o := instructions.Options{Cwd: cwd, Files: instructions.DefaultFiles, MaxBytes: instructions.DefaultMaxBytes, MaxImportDepth: 5}
		b.ReportAllocs()
		defer cpuPerOp(b)()
		for b.Loop() {
			files, _ := instructions.Load(o)
			if text := instructions.Render(files, o.MaxBytes); len(text) < 3*20480 {
				b.Fatalf("%d bytes", len(text))
			}
		}
	})
}

// cpuPerOp locks the benchmark to its thread and, when the returned func
// runs, reports the thread's CPU time per op ("cpu-ns/op"): on a loaded
// machine wall time per op measures the neighbours too.
func cpuPerOp(b *testing.B) func() {
	runtime.LockOSThread()
	t0, ok := threadCPU()
	return func() {
		if t1, ok1 := threadCPU(); ok && ok1 && b.N > 0 {
			b.ReportMetric(float64(t1-t0)/float64(b.N), "cpu-ns/op")
		}
		runtime.UnlockOSThread()
	}
}

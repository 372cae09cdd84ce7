//go:build unix

package subprocess

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/dshgo/harness/services/subprocess/sandbox"
)

// modelLatency stands for the first model request of a session, during
// which the bash tool prewarms (a real first request takes longer).
const modelLatency = 300 * time.Millisecond

// BenchmarkFirstCall is the first `bash -c true` of a fresh runtime (the
// first bash call of a session), in one run: unsandboxed; sandboxed
// (default policy, bwrap with a shared sandbox) as it was, paying the
// watchdog, the probe and the zygote one after the other; and sandboxed
// after Prewarm had modelLatency to run, as the bash tool does at session
// start. first-ms/op is that call's wall time; the runtime's start and
// close are outside it.
func BenchmarkFirstCall(b *testing.B) {
	if _, errs := sandbox.Probe(sandbox.BackendBwrap); errs != nil {
		b.Skipf("bwrap unavailable: %v", errs)
	}
	for _, name := range []string{"unsandboxed", "sandboxed", "sandboxed-prewarmed"} {
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			var p *SandboxPolicy
			if name != "unsandboxed" {
				p = &SandboxPolicy{Mode: SandboxWorkspaceWrite, DenyRead: []string{"~/.ssh", "~/.aws", "**/.env{,.*}"}}
			}
			var total time.Duration
			for b.Loop() {
				rt, err := New(Options{}, nil)
				if err != nil {
					b.Fatal(err)
				}
				if name == "sandboxed-prewarmed" {
					done := make(chan struct{})
					go func() { defer close(done); rt.Prewarm(context.Background(), p, dir) }()
					time.Sleep(modelLatency)
					<-done
				}
				start := time.Now()
				res, err := rt.Run(Spec{Argv: []string{"bash", "-c", "true"}, Dir: dir, Sandbox: p, Stdin: IgnoreStdin(),
					Stdout: Collect(4096), Stderr: Collect(4096), Grace: time.Second})
				total += time.Since(start)
				if err != nil || res.Outcome.ExitCode == nil || *res.Outcome.ExitCode != 0 {
					b.Fatalf("run: %v %+v", err, res.Outcome)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				err = rt.Close(ctx)
				cancel()
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(total)/float64(b.N)/1e6, "first-ms/op")
		})
	}
}

// BenchmarkGoTestWarm is `go test -count=1 ./...` (build cache warm, the
// test run itself repeated) and `go test ./...` (a test cache hit) of a
// 1-package module, unsandboxed and in the default sandbox (shared bwrap,
// the toolchain caches in the cache root), in one run: compare ns/op.
// Each is warmed by one run first.
func BenchmarkGoTestWarm(b *testing.B) {
	if _, err := exec.LookPath("go"); err != nil {
		b.Skip("no go")
	}
	if _, errs := sandbox.Probe(sandbox.BackendBwrap); errs != nil {
		b.Skipf("bwrap unavailable: %v", errs)
	}
	b.Setenv("XDG_CACHE_HOME", b.TempDir())
	dir := b.TempDir()
	for name, content := range map[string]string{
		"go.mod":       "module example.com/calc\n\ngo 1.22\n",
		"calc.go":      "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
		"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(Add(2, 3))\n\t}\n}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	rt := newRuntime(b, Options{})
	for _, cmd := range []string{"go test -count=1 ./...", "go test ./..."} {
		for _, sandboxed := range []bool{false, true} {
			name := "unsandboxed"
			var p *SandboxPolicy
			if sandboxed {
				name, p = "sandboxed", &SandboxPolicy{Mode: SandboxWorkspaceWrite, DenyRead: []string{"~/.ssh", "~/.aws", "**/.env{,.*}"}}
			}
			run := func() {
				res, err := rt.Run(Spec{Argv: []string{"bash", "-c", cmd}, Dir: dir, Sandbox: p, Stdin: IgnoreStdin(),
					Stdout: Collect(1 << 16), Stderr: Collect(1 << 16), Grace: time.Second})
				if err != nil || res.Outcome.ExitCode == nil || *res.Outcome.ExitCode != 0 {
					b.Fatalf("%s: %v %+v %s", cmd, err, res.Outcome, res.Stderr.ReadFrom(0).Text)
				}
			}
			b.Run(cmd+"/"+name, func(b *testing.B) {
				run()
				for b.Loop() {
					run()
				}
			})
		}
	}
}

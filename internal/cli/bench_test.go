//go:build unix

package cli_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshgo/harness"
	"github.com/dshgo/harness/internal/cli"
	"github.com/dshgo/harness/plugins/std"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// runMeasured runs cmd and returns its wall time and peak RSS in MiB.
func runMeasured(b *testing.B, cmd *exec.Cmd) (time.Duration, float64) {
	b.Helper()
	start := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(start)
	if err != nil {
		b.Fatalf("%v: %v\n%s", cmd.Args, err, out)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return wall, float64(ru.Maxrss) / 1024 // Maxrss is in KiB on Linux
}

// BenchmarkRunProcess3Turns is the end-to-end cost of `harness run` as a
// process on a small git repository against the scripted model: turn 1
// reads a file and runs bash writing another (parallel-safe read first,
// bash exclusive), turn 2 edits, turn 3 answers. Reports the wall time per
// run (ms/run) and the largest peak RSS seen (peak-RSS-MiB).
func BenchmarkRunProcess3Turns(b *testing.B) {
	bin := harnessBinary(b)
	repo := b.TempDir()
	for _, args := range [][]string{{"init", "-q"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v %s", err, out)
		}
	}
	srv := llmtest.New(b, nil)
	state := b.TempDir()
	cfg := filepath.Join(b.TempDir(), "harness.yml")
	if err := os.WriteFile(cfg, []byte(agentManifest(srv.URL, state, "")), 0o644); err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	var peak float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("hello world\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		srv.Enqueue(
			llmtest.Stream(
				llmtest.ToolCallStart(0, "c1", "read", `{"file_path":"a.txt"}`),
				llmtest.ToolCallStart(1, "c2", "bash", `{"command":"echo made > b.txt","description":"write a file"}`),
				llmtest.FinishWithUsage("tool_calls", llmtest.Usage{PromptTokens: 3000, CompletionTokens: 40, TotalTokens: 3040})),
			llmtest.Stream(
				llmtest.ToolCallStart(0, "c3", "edit", `{"file_path":"a.txt","old_string":"world","new_string":"there"}`),
				llmtest.FinishWithUsage("tool_calls", llmtest.Usage{PromptTokens: 3100, CompletionTokens: 30, TotalTokens: 3130})),
			llmtest.Stream(llmtest.TextDelta("Edited a.txt and wrote b.txt."),
				llmtest.FinishWithUsage("stop", llmtest.Usage{PromptTokens: 3200, CompletionTokens: 10, TotalTokens: 3210})),
		)
		cmd := exec.Command(bin, "--config", cfg, "run", "edit a.txt and write b.txt")
		cmd.Dir = repo
		cmd.Env = baseEnv()
		b.StartTimer()
		wall, rss := runMeasured(b, cmd)
		b.StopTimer()
		total += wall
		peak = max(peak, rss)
		if got, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(got) != "hello there\n" {
			b.Fatalf("a.txt = %q", got)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/run")
	b.ReportMetric(peak, "peak-RSS-MiB")
}

// BenchmarkCheckProcess is a cold `harness check` of the embedded default
// manifest (the full default plugin tree) as a process. Reports ms/run and
// peak-RSS-MiB.
func BenchmarkCheckProcess(b *testing.B) {
	bin := harnessBinary(b)
	dir := b.TempDir()
	var total time.Duration
	var peak float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(bin, "check")
		cmd.Dir = dir
		cmd.Env = append(baseEnv(), "DEEPSEEK_API_KEY=sk-bench-fake", "XDG_STATE_HOME="+dir)
		wall, rss := runMeasured(b, cmd)
		total += wall
		peak = max(peak, rss)
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/run")
	b.ReportMetric(peak, "peak-RSS-MiB")
}

// BenchmarkCheckInProcess is `harness check` on the embedded default
// manifest without the process: discovery, composing, building and
// starting every plugin, the sandbox line (its probe included) and the
// stop. Against BenchmarkCheckProcess it separates the command's own work
// from process start and package initialisation.
func BenchmarkCheckInProcess(b *testing.B) {
	dir := b.TempDir()
	b.Setenv("XDG_STATE_HOME", dir)
	b.Chdir(dir)
	lookup := func(k string) (string, bool) {
		if k == "DEEPSEEK_API_KEY" {
			return "sk-bench-fake", true
		}
		return "", false
	}
	b.ReportAllocs()
	for b.Loop() {
		var out, errb bytes.Buffer
		env := &cli.Env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""), DefaultManifest: harness.DefaultManifest,
			Plugins: std.Plugins(), LookupEnv: lookup, Ctx: context.Background()}
		if code := cli.Run([]string{"check"}, env); code != 0 {
			b.Fatalf("check: exit %d\n%s%s", code, out.String(), errb.String())
		}
	}
}

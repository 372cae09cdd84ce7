package agent_test

import (
	"context"
	"io"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/plugins/agent"
	prompttools "github.com/dshgo/harness/plugins/prompt-tools"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tokenmeter"
	"github.com/dshgo/harness/services/tools"
)

// BenchmarkAgentStep measures one agent step against the real llmtest
// server over loopback HTTP (issue 20 item 16): the model answers at once
// (no model time beyond the server writing its scripted events), the tool
// is trivial (current_time). Each iteration is a turn of two steps (a tool
// call, then the answer) in a new session (opened and closed outside the
// timer, so the history does not grow across iterations); ms/step is wall
// time per step, so it includes the loopback SSE round trip; compare it
// with BenchmarkStep (in-process model, no HTTP, 50-message history) in
// the same run.
//
// The sub-benchmark "session" runs every iteration in one session instead,
// so the history grows by four messages per iteration (about 2N messages
// on average): it shows how step cost grows with the history sent.
func BenchmarkAgentStep(b *testing.B) {
	b.Run("fresh", func(b *testing.B) { benchAgentStep(b, true) })
	b.Run("session", func(b *testing.B) { benchAgentStep(b, false) })
}

func benchAgentStep(b *testing.B, fresh bool) {
	srv := llmtest.NewServer(nil)
	defer srv.Close()
	root := core.NewRoot(core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer root.Dispose(context.Background())
	rc := root.Context()
	for _, p := range []core.Plugin{systemprompt.Plugin, tools.Plugin, prompttools.Plugin, tokenmeter.Plugin} {
		rc.Plugin(p, nil)
	}
	mountLLM(rc, srv.URL)
	rc.Plugin(toolsPlugin, struct {
		Dir string `yaml:"dir"`
	}{b.TempDir()})
	rc.Plugin(sessions.JSONLPlugin, sessions.JSONLConfig{StateDir: b.TempDir()})
	fb := rc.Plugin(agent.Plugin, agent.Config{MaxSteps: 50})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := fb.Await(ctx); err != nil {
		b.Fatal(err)
	}
	svc, _ := core.Lookup(rc, agent.Key)
	var ss *agent.Session
	open := func() {
		var err error
		if ss, err = svc.Open(context.Background(), agent.Options{}); err != nil {
			b.Fatal(err)
		}
	}
	if !fresh {
		open()
		defer ss.Close(context.Background())
	}
	u := llmtest.Usage{PromptTokens: 5000, CompletionTokens: 20, TotalTokens: 5020}
	call := llmtest.Stream(llmtest.ToolCallStart(0, "c", "current_time", "{}"), llmtest.FinishWithUsage("tool_calls", u))
	answer := llmtest.Stream(llmtest.TextDelta("done"), llmtest.FinishWithUsage("stop", u))
	b.ReportAllocs()
	b.ResetTimer()
	var elapsed, cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		srv.Enqueue(call, answer)
		if fresh {
			open()
		}
		b.StartTimer()
		start, cpu0 := time.Now(), cpuTime()
		res, err := ss.Run(context.Background(), "what time is it")
		elapsed += time.Since(start)
		cpu += cpuTime() - cpu0
		b.StopTimer()
		if err != nil || res.Steps != 2 {
			b.Fatalf("%+v %v", res, err)
		}
		if fresh {
			_ = ss.Close(context.Background())
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(elapsed.Microseconds())/1000/float64(2*b.N), "ms/step")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(2*b.N), "cpu-ms/step")
}

// cpuTime is this process's user+system CPU time. Per step it includes
// the llmtest server's work (same process) and excludes the waiting for a
// CPU that dominates wall time on a loaded machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

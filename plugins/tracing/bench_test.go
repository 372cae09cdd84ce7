package tracing_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/plugins/agent"
	llmopenai "github.com/dshgo/harness/plugins/llm-openai"
	prompttools "github.com/dshgo/harness/plugins/prompt-tools"
	"github.com/dshgo/harness/plugins/tracing"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tokenmeter"
	"github.com/dshgo/harness/services/tools"
)

// BenchmarkAgentStep measures what tracing costs an agent turn: each
// iteration is a turn of two steps (a tool call, then the answer) against
// the llmtest server over loopback HTTP, in a fresh session (opened and
// closed outside the timer), like plugins/agent's BenchmarkAgentStep.
//
//   - none: no tracing row (the reference);
//   - off:  the tracing row without OTEL_* variables (the default);
//   - on:   OTEL_EXPORTER_OTLP_ENDPOINT set: spans are made and exported
//     by the batch processor over OTLP/HTTP to a local server that
//     discards them (four spans per turn: invoke_agent, two chat, one
//     execute_tool).
//
// Compare ms/step, cpu-ms/step and allocs/op of the three in one run. The
// exporter's own work (batching, protobuf, HTTP) runs after the turn, on
// its goroutine: cpu-ms/step counts what of it fell within the timed turn.
func BenchmarkAgentStep(b *testing.B) {
	for _, k := range otelVars {
		b.Setenv(k, "")
	}
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer sink.Close()
	b.Run("none", func(b *testing.B) { benchStep(b, false, "") })
	b.Run("off", func(b *testing.B) { benchStep(b, true, "") })
	b.Run("on", func(b *testing.B) { benchStep(b, true, sink.URL) })
}

func benchStep(b *testing.B, row bool, endpoint string) {
	b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
	srv := llmtest.NewServer(nil)
	defer srv.Close()
	root := core.NewRoot(core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer root.Dispose(context.Background())
	rc := root.Context()
	for _, p := range []core.Plugin{systemprompt.Plugin, tools.Plugin, prompttools.Plugin, tokenmeter.Plugin, llm.Plugin, testTools} {
		rc.Plugin(p, nil)
	}
	retries := 0
	rc.Plugin(llmopenai.Plugin, llmopenai.Config{Provider: "test", BaseURL: srv.URL, APIKey: "sk-test", MaxRetries: &retries,
		Models: []llmopenai.ModelConfig{{Name: "m1", Default: true, Thinking: llm.ThinkingDisabled, ContextWindow: 1 << 20}}})
	rc.Plugin(sessions.JSONLPlugin, sessions.JSONLConfig{StateDir: b.TempDir()})
	if row {
		rc.Plugin(tracing.Plugin, nil)
	}
	fb := rc.Plugin(agent.Plugin, agent.Config{MaxSteps: 10})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := fb.Await(ctx); err != nil {
		b.Fatal(err)
	}
	if ts, ok := core.Lookup(rc, tracing.Key); row && (!ok || ts.Enabled() != (endpoint != "")) {
		b.Fatalf("tracing service %v, enabled %v", ok, ts != nil && ts.Enabled())
	}
	svc, _ := core.Lookup(rc, agent.Key)
	u := llmtest.Usage{PromptTokens: 5000, CompletionTokens: 20, TotalTokens: 5020}
	call := llmtest.Stream(llmtest.ToolCallStart(0, "c", "echo", `{"text":"x"}`), llmtest.FinishWithUsage("tool_calls", u))
	answer := llmtest.Stream(llmtest.TextDelta("done"), llmtest.FinishWithUsage("stop", u))
	b.ReportAllocs()
	b.ResetTimer()
	var elapsed, cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		srv.Enqueue(call, answer)
		ss, err := svc.Open(context.Background(), agent.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start, cpu0 := time.Now(), cpuTime()
		res, err := ss.Run(context.Background(), "echo x")
		elapsed += time.Since(start)
		cpu += cpuTime() - cpu0
		b.StopTimer()
		if err != nil || res.Steps != 2 {
			b.Fatalf("%+v %v", res, err)
		}
		_ = ss.Close(context.Background())
		b.StartTimer()
	}
	b.ReportMetric(float64(elapsed.Microseconds())/1000/float64(2*b.N), "ms/step")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(2*b.N), "cpu-ms/step")
}

// cpuTime is this process's user+system CPU time: per step it includes
// the llmtest server, the batch span processor and the OTLP sink (all in
// this process), and excludes waiting for a CPU on a loaded machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

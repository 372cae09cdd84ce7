package tracing_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	harnessapi "github.com/dshgo/harness"
	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/services/telemetry"
)

// BenchmarkAgentStep measures what tracing costs an agent turn: each
// iteration is a turn of two steps (a tool call, then the answer) against
// the llmtest server over loopback HTTP, in a fresh session (opened and
// closed outside the timer), like services/agent's BenchmarkAgentStep (both
// are harnesstest's StartAgent and Agent.BenchSteps).
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
	rows := "  - name: tracing-test-tools\n"
	if row {
		rows += "  - name: tracing\n"
	}
	a := harnesstest.StartAgent(b, rows, harnessapi.WithPlugins(testTools))
	if ts, ok := core.Lookup(a.Harness.Root.Context(), telemetry.Key); row && (!ok || ts.Enabled() != (endpoint != "")) {
		b.Fatalf("tracing service %v, enabled %v", ok, ts != nil && ts.Enabled())
	}
	a.BenchSteps(b, "echo x", "echo", `{"text":"x"}`, false)
}

package harnesstest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dshgo/harness"
	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// Agent is an agent harness over a scripted model, booted by [StartAgent]
// for benchmarks of agent steps ([Agent.BenchSteps]).
type Agent struct {
	// Harness is the started harness.
	Harness *fxcore.Harness
	// Model is the scripted model the harness's only route (test/m1) calls.
	Model *llmtest.Server
	// Service is the agent service.
	Service *agent.Service
}

// AgentManifest returns the harness.yml text of an agent over the scripted
// model at modelURL (an [llmtest.Server]'s URL): the rows systemprompt,
// tools, prompt-tools, tokenmeter, llm and llm-openai (row id "test",
// provider "test", one model m1 without thinking and with a 1 MiB context
// window, no retries), then rows (harness.yml rows indented as under
// plugins:), which name the sessions store, the agent and whatever else the
// test needs.
func AgentManifest(modelURL, rows string) string {
	return fmt.Sprintf(`plugins:
  - name: systemprompt
  - name: tools
  - name: prompt-tools
  - name: tokenmeter
  - name: llm
  - id: test
    name: llm-openai
    config:
      provider: test
      baseURL: %s
      apiKey: sk-test
      maxRetries: 0
      models:
        - {name: m1, default: true, thinking: disabled, contextWindow: 1048576}
%s`, modelURL, rows)
}

// StartAgent boots, with [Start], an agent over a scripted model with an
// empty script: the rows of [AgentManifest], sessions-jsonl in a temporary
// state directory, then rows (harness.yml rows: the plugins under
// measurement and one that registers the tool a turn calls; opts add their
// definitions), then agent.
func StartAgent(tb testing.TB, rows string, opts ...harness.Option) *Agent {
	tb.Helper()
	srv := llmtest.New(tb, nil)
	manifest := AgentManifest(srv.URL, fmt.Sprintf("  - name: sessions-jsonl\n    config: {stateDir: %s}\n%s  - name: agent\n", tb.TempDir(), rows))
	h := Start(tb, manifest, opts...)
	return &Agent{Harness: h, Model: srv, Service: Service(tb, h, agent.Key)}
}

// BenchSteps measures agent steps. Each of b.N iterations is a turn of two
// steps: the model calls tool with args, then answers "done" (each step
// reports 5000 prompt and 20 completion tokens). The turn runs in a new
// session, opened and closed outside the timer, so the history does not
// grow across iterations; with oneSession every iteration runs in one
// session instead, whose history grows by four messages an iteration.
//
// Besides ns/op and allocations it reports ms/step, the wall time of a
// step including the loopback round trip to the model, and cpu-ms/step,
// this process's user and system CPU time per step: it includes the
// scripted model's work and whatever else the process does meanwhile
// (exporters, say), and excludes waiting for a CPU on a loaded machine.
func (a *Agent) BenchSteps(b *testing.B, prompt, tool, args string, oneSession bool) {
	u := llmtest.Usage{PromptTokens: 5000, CompletionTokens: 20, TotalTokens: 5020}
	call := llmtest.Stream(llmtest.ToolCallStart(0, "c", tool, args), llmtest.FinishWithUsage("tool_calls", u))
	answer := llmtest.Stream(llmtest.TextDelta("done"), llmtest.FinishWithUsage("stop", u))
	var ss *agent.Session
	open := func() {
		var err error
		if ss, err = a.Service.Open(context.Background(), agent.Options{}); err != nil {
			b.Fatal(err)
		}
	}
	if oneSession {
		open()
		defer ss.Close(context.Background())
	}
	b.ReportAllocs()
	b.ResetTimer()
	var elapsed, cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		a.Model.Enqueue(call, answer)
		if !oneSession {
			open()
		}
		b.StartTimer()
		start, cpu0 := time.Now(), processCPU()
		res, err := ss.Run(context.Background(), prompt)
		elapsed += time.Since(start)
		cpu += processCPU() - cpu0
		b.StopTimer()
		if err != nil || res.Steps != 2 {
			b.Fatalf("%+v %v", res, err)
		}
		if !oneSession {
			_ = ss.Close(context.Background())
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(elapsed.Microseconds())/1000/float64(2*b.N), "ms/step")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(2*b.N), "cpu-ms/step")
}

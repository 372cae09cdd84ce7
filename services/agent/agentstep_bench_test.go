package agent_test

import (
	"testing"

	"github.com/dshgo/harness"
	"github.com/dshgo/harness/harnesstest"
)

// BenchmarkAgentStep measures one agent step against the real llmtest
// server over loopback HTTP (issue 20 item 16): the model answers at once
// (no model time beyond the server writing its scripted events), the tool
// is trivial (current_time). Each iteration is a turn of two steps (a tool
// call, then the answer) in a new session (opened and closed outside the
// timer, so the history does not grow across iterations); ms/step is wall
// time per step, so it includes the loopback SSE round trip; compare it
// with BenchmarkStep (in-process model, no HTTP, 50-message history) in
// the same run. The set-up and the loop are harnesstest's
// (StartAgent, Agent.BenchSteps).
//
// The sub-benchmark "session" runs every iteration in one session instead,
// so the history grows by four messages per iteration (about 2N messages
// on average): it shows how step cost grows with the history sent.
func BenchmarkAgentStep(b *testing.B) {
	b.Run("fresh", func(b *testing.B) { benchAgentStep(b, false) })
	b.Run("session", func(b *testing.B) { benchAgentStep(b, true) })
}

func benchAgentStep(b *testing.B, oneSession bool) {
	a := harnesstest.StartAgent(b, "  - name: test-tools\n    config: {dir: "+b.TempDir()+"}\n", harness.WithPlugins(toolsPlugin))
	a.BenchSteps(b, "what time is it", "current_time", "{}", oneSession)
}

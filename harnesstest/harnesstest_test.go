package harnesstest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/dshgo/harness"
	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/services/tools"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var key = core.NewKey[string]("word")

type cfg struct {
	Word string `yaml:"word"`
}

var word = core.Define("word", func(c *core.Context, cfg cfg) error { return core.Provide(c, key, cfg.Word) })

func TestStartBootsFromAManifest(t *testing.T) {
	h := harnesstest.Start(t, "plugins:\n  - name: word\n    config: {word: hi}\n", harness.WithPlugins(word))
	if got := harnesstest.Service(t, h, key); got != "hi" {
		t.Fatalf("got %q", got)
	}
}

// nowTool registers the tool "now", which answers "noon".
var nowTool = core.Define("now-tool", func(c *core.Context, _ struct{}) error {
	return tools.Register(c, tools.Define("now", "The time.", func(context.Context, *tools.Execution, struct{}) (string, error) {
		return "noon", nil
	}))
}, core.WithInject(tools.Key.Name()))

// Each iteration of BenchSteps is one turn of two model requests (the tool
// call, then the answer), and it reports the per-step metrics.
func TestAgentBenchStepsRunsTurnsOfTwoSteps(t *testing.T) {
	for _, oneSession := range []bool{false, true} {
		var a *harnesstest.Agent
		r := testing.Benchmark(func(b *testing.B) {
			a = harnesstest.StartAgent(b, "  - name: now-tool\n", harness.WithPlugins(nowTool))
			a.BenchSteps(b, "what time is it", "now", "{}", oneSession)
		})
		if r.N == 0 || r.Extra["ms/step"] <= 0 || r.Extra["cpu-ms/step"] <= 0 || r.AllocsPerOp() == 0 {
			t.Fatalf("one session %v: %+v", oneSession, r)
		}
		reqs := a.Model.Requests()
		if len(reqs) != 2*r.N {
			t.Fatalf("one session %v: %d model requests for %d turns", oneSession, len(reqs), r.N)
		}
		w, err := reqs[len(reqs)-1].Wire()
		if err != nil {
			t.Fatal(err)
		}
		if h := w.History(); !strings.Contains(h, "noon") || !strings.Contains(h, "what time is it") {
			t.Fatalf("the last request lacks the tool result or the prompt:\n%s", h)
		}
	}
}

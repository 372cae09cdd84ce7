package streamtool_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"example.com/providers/streamtool"
	"github.com/dshgo/harness"
	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/services/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The output streams while the process runs: the child prints "first" and
// then waits for a file that the Output listener creates only when it has
// received "first". If lines were delivered only at exit, the child would
// never finish (the call would end at the test's bound, failing).
func TestOutputStreamsWhileTheProcessRuns(t *testing.T) {
	dir := t.TempDir()
	gate := filepath.Join(dir, "go-on")
	var mu sync.Mutex
	var got []string
	listener := core.Define("run-checks-listener", func(c *core.Context, _ struct{}) error {
		return core.On(c, streamtool.Output, func(_ context.Context, l streamtool.Line) error {
			mu.Lock()
			got = append(got, l.CallID+": "+l.Text)
			mu.Unlock()
			if l.Text == "first" {
				return os.WriteFile(gate, nil, 0o600)
			}
			return nil
		})
	})
	h := harnesstest.Start(t, fmt.Sprintf(`plugins:
  - {id: subprocess, name: subprocess-local, config: {sandbox: {mode: off}}}
  - {id: tools, name: tools}
  - {id: listener, name: run-checks-listener}
  - id: checks
    name: tool-run-checks
    config:
      command: [sh, -c, 'echo first; while [ ! -e "$1" ]; do sleep 0.01; done; echo second; echo oops >&2; exit 3', sh, %q]
`, gate), harness.WithPlugins(listener))
	reg := harnesstest.Service(t, h, tools.Key)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a bound, not an assertion
	defer cancel()
	out := reg.Execute(ctx, tools.Call{ID: "call_7", Name: "run_checks", Arguments: "{}"})
	if text := tools.TextOf(out.Content); out.IsError || text != "exit 3 (2 lines)\nfirst\nsecond\noops\n" {
		t.Fatalf("result %q (error %v)", text, out.IsError)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, "|") != "call_7: first|call_7: second" {
		t.Fatalf("streamed %q", got)
	}
}

// A bad config fails the boot naming the field.
func TestBootFailsWithoutACommand(t *testing.T) {
	h, err := harness.New(harness.WithManifest([]byte("plugins:\n  - {id: subprocess, name: subprocess-local}\n  - {id: tools, name: tools}\n  - {id: checks, name: tool-run-checks}\n")))
	if err == nil {
		err = h.Start(context.Background())
		_ = h.Stop(context.Background())
	}
	if err == nil || !strings.Contains(err.Error(), "command: required") {
		t.Fatalf("err = %v", err)
	}
}

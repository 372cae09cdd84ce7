package subagenttools_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/tools"
)

// A child runs a real bash command that starts a background process; when
// the parent is interrupted, the command and its background process are
// gone, and both logs record the aborted calls.
func TestInterruptingTheParentLeavesNoChildProcess(t *testing.T) {
	dir := t.TempDir()
	marker := "subagent-survivor-" + filepath.Base(dir)
	cmdJSON := `{"command":"echo $$ > ` + dir + `/shell.pid; (exec -a ` + marker + ` sleep 60) & echo $! > ` + dir + `/bg.pid; wait","description":"run it"}`
	f := newFixture(t, map[string][]llmtest.Turn{
		"":   {llmtest.Calls(call("t1", "task", `{"description":"run","prompt":"#A run it"}`))},
		"#A": {llmtest.Calls(call("b1", "bash", cmdJSON))},
	}, fixtureOpts{bash: true})
	ss := f.open(agent.Options{Model: "test/m1"})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for ctx.Err() == nil {
			if b, _ := os.ReadFile(filepath.Join(dir, "bg.pid")); len(b) > 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	res, err := ss.Run(ctx, "delegate a command")
	cancel()
	if !errors.Is(err, context.Canceled) || res.Reason != "aborted" {
		t.Fatalf("run = %+v, %v\n%+v", res, err, f.records(f.children(ss.ID())[0]))
	}
	for _, name := range []string{"shell.pid", "bg.pid"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		pid := strings.TrimSpace(string(b))
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat("/proc/" + pid); err != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s %s survived the interrupt", name, pid)
			}
		}
	}
	kid := f.children(ss.ID())[0]
	aborted := func(id, tool string) bool {
		for _, r := range f.records(id) {
			if r.Type == agent.RecordToolResult && r.Name == tool && r.IsError && r.Error != nil && r.Error.Code == tools.CodeAborted {
				return true
			}
		}
		return false
	}
	if !aborted(kid, "bash") || !aborted(ss.ID(), "task") {
		t.Fatalf("aborted results missing:\nchild %+v\nparent %+v", f.records(kid), f.records(ss.ID()))
	}
}

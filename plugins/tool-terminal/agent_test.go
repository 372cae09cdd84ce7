package toolterminal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
)

func bashCall(id string, args map[string]any) llmtest.Call {
	b, _ := json.Marshal(args)
	return llmtest.Call{ID: id, Name: "bash", Args: string(b)}
}

// Through the agent loop and the scripted model: a background shell that
// exits is announced to the model with the result of its next tool call
// (once), and closing the session kills the shell still running.
func TestAgentExitNoticeAndSessionEndKills(t *testing.T) {
	need(t, "bwrap")
	dir := t.TempDir()
	marker := fmt.Sprintf("bgshell-session-marker-%d", time.Now().UnixNano())
	a := harnesstest.StartAgent(t, fmt.Sprintf(`  - name: subprocess-local
    config:
      sandbox: {mode: workspace-write}
  - name: tool-bash
    config: {cwd: %q}
  - name: tool-terminal
    config: {cwd: %q}
`, dir, dir))
	a.Model.Enqueue(
		llmtest.Calls(
			bashCall("quick", map[string]any{"command": "echo quick-done; exit 3", "run_in_background": true}),
			bashCall("long", map[string]any{"command": "sleep 300; : " + marker, "run_in_background": true})),
		llmtest.Calls(bashCall("wait", map[string]any{"command": "sleep 1"})),
		llmtest.Calls(bashCall("again", map[string]any{"command": "true"})),
		llmtest.Reply("ok"),
	)
	ss, err := a.Service.Open(context.Background(), agent.Options{Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close(context.Background())
	if _, err := ss.Run(context.Background(), "start two shells"); err != nil {
		t.Fatal(err)
	}
	reqs := a.Model.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests, want 4", len(reqs))
	}
	history := func(i int) string {
		w, err := reqs[i].Wire()
		if err != nil {
			t.Fatal(err)
		}
		return w.History()
	}
	notice := "[background shell shell-1 (echo quick-done; exit 3) exited with code 3"
	if h := history(1); !strings.Contains(h, "[started in the background as shell shell-1]") || !strings.Contains(h, "[started in the background as shell shell-2]") {
		t.Fatalf("second request: want both starts\n%s", h)
	}
	if h := history(2); !strings.Contains(h, notice) || strings.Contains(h, "shell-2 (") {
		t.Fatalf("third request: want the exit notice of shell-1 only\n%s", h)
	}
	if h := history(3); strings.Count(h, notice) != 1 {
		t.Fatalf("fourth request: the notice must come once\n%s", h)
	}
	if p := alive(t, marker); len(p) == 0 {
		t.Fatal("the long shell is not running before the session ends")
	}
	if err := ss.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p := alive(t, marker); len(p) != 0 {
		t.Fatalf("the session ended and its shell still runs: %v", p)
	}
}

package cli_test

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// Each tool result's durationMs is the call's own time: a fast read that
// follows a slow bash call in the same step does not inherit bash's time
// (it used to count from the start of the step's batch).
func TestToolDurationIsMeasuredFromTheCallsOwnStart(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "alpha\n"})
	srv := llmtest.New(t, []llmtest.Turn{
		llmtest.Calls(
			llmtest.Call{ID: "slow", Name: "bash", Args: `{"command":"sleep 1.2","description":"wait"}`},
			llmtest.Call{ID: "fast", Name: "read", Args: `{"file_path":"a.txt"}`},
		),
		text("done"),
	})
	r := runAgent(t, repo, agentManifest(srv.URL, t.TempDir(), ""), "", "run", "-o", "stream-json", "go")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	took := map[string]int64{}
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct {
			Type       string `json:"type"`
			ToolResult *struct {
				CallID     string `json:"callId"`
				IsError    bool   `json:"isError"`
				Content    string `json:"content"`
				DurationMs *int64 `json:"durationMs"`
			} `json:"toolResult"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if e.Type == "tool_result" {
			if e.ToolResult.IsError || e.ToolResult.DurationMs == nil {
				t.Fatalf("result %+v", e.ToolResult)
			}
			took[e.ToolResult.CallID] = *e.ToolResult.DurationMs
		}
	}
	// bash slept 1200 ms; the read runs after it (bash is exclusive) and
	// takes a few ms, far below the 1200 ms it would show if it were timed
	// from the step's start.
	if took["slow"] < 1200 || took["fast"] >= 1200 {
		t.Fatalf("durationMs: bash %d, read %d; stdout:\n%s", took["slow"], took["fast"], r.stdout)
	}
}

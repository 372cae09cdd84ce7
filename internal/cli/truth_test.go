package cli_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// runDefaultBinary runs the harness binary on the embedded default
// manifest (no --config, no -y: headless, in the default sandbox) in dir,
// its DeepSeek row pointed at srv by a --patch, and returns stdout,
// stderr and the exit code.
func runDefaultBinary(t *testing.T, dir string, srv *llmtest.Server, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runDefaultBinaryIn(t, dir, t.TempDir(), srv, args...)
}

// runDefaultBinaryIn is runDefaultBinary with state as XDG_STATE_HOME
// (and the config and cache homes).
func runDefaultBinaryIn(t *testing.T, dir, state string, srv *llmtest.Server, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	patch := filepath.Join(t.TempDir(), "model.yml")
	if err := os.WriteFile(patch, []byte(fmt.Sprintf("- id: deepseek\n  config: {baseURL: %s, maxRetries: 0}\n", srv.URL)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(harnessBinary(t), append([]string{"--patch", patch, "--no-claude-settings"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(baseEnv(), "DEEPSEEK_API_KEY=sk-test", "XDG_STATE_HOME="+state, "XDG_CONFIG_HOME="+state, "XDG_CACHE_HOME="+state)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("harness: %v\n%s", err, errb.String())
	}
	return out.String(), errb.String(), code
}

// failingBashTurns is a model that runs two bash calls that fail although
// the tool returns a value: one its own short deadline stops, one that
// exits 3 (without a description: it is optional); then answers.
func failingBashTurns(sleep string) []llmtest.Turn {
	return []llmtest.Turn{
		llmtest.Calls(llmtest.Call{ID: "slow", Name: "bash", Args: fmt.Sprintf(`{"command":%q,"description":"wait","timeoutMs":300}`, sleep)}),
		llmtest.Calls(llmtest.Call{ID: "exit3", Name: "bash", Args: `{"command":"echo partial; exit 3"}`}),
		text("done"),
	}
}

// A bash call that timed out and one that exited non-zero are failures
// in every output of `harness run` (text, stream-json, json), with the
// reason; a call without a description runs (it is optional). They used
// to print "✓ bash: 3 lines, 300 ms".
func TestFailedBashCallsAreFailuresInEveryOutput(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	t.Run("text", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.New(t, failingBashTurns(sleepMarker(30)))
		_, stderr, code := runDefaultBinary(t, t.TempDir(), srv, "run", "go")
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, stderr)
		}
		for _, want := range []string{"→ bash sleep ", "  ✗ bash: timed out after 300ms, ", "→ bash echo partial; exit 3\n", "  ✗ bash: exit code 3, "} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		}
		if strings.Contains(stderr, "✓ bash") {
			t.Errorf("a failed call is shown as a success:\n%s", stderr)
		}
	})
	t.Run("stream-json", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.New(t, failingBashTurns(sleepMarker(30)))
		stdout, stderr, code := runDefaultBinary(t, t.TempDir(), srv, "run", "-o", "stream-json", "go")
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, stderr)
		}
		type presentation struct {
			ToolCallID string `json:"toolCallId"`
			Title      string `json:"title"`
			Kind       string `json:"kind"`
			Status     string `json:"status"`
			Content    []struct {
				Type       string `json:"type"`
				TerminalID string `json:"terminalId"`
				Meta       struct {
					Output   string `json:"output"`
					ExitCode *int   `json:"exitCode"`
				} `json:"_meta"`
			} `json:"content"`
			Meta struct {
				Reason string `json:"reason"`
			} `json:"_meta"`
		}
		final := map[string]presentation{}
		pending := map[string]presentation{}
		sc := bufio.NewScanner(strings.NewReader(stdout))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var e struct {
				Type     string `json:"type"`
				ToolCall *struct {
					Presentation *presentation `json:"presentation"`
				} `json:"toolCall"`
				ToolResult *struct {
					CallID       string        `json:"callId"`
					IsError      bool          `json:"isError"`
					Presentation *presentation `json:"presentation"`
				} `json:"toolResult"`
			}
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Fatalf("%s: %v", sc.Text(), err)
			}
			switch {
			case e.Type == "tool_call" && e.ToolCall.Presentation != nil:
				pending[e.ToolCall.Presentation.ToolCallID] = *e.ToolCall.Presentation
			case e.Type == "tool_result" && e.ToolResult.Presentation != nil:
				final[e.ToolResult.CallID] = *e.ToolResult.Presentation
			}
		}
		if p := pending["exit3"]; p.Status != "pending" || p.Kind != "execute" || p.Title != "echo partial; exit 3" {
			t.Errorf("pending presentation %+v", p)
		}
		if p := final["slow"]; p.Status != "failed" || p.Meta.Reason != "timed out after 300ms" {
			t.Errorf("timed-out call: %+v\n%s", p, stdout)
		}
		p := final["exit3"]
		if p.Status != "failed" || p.Meta.Reason != "exit code 3" || len(p.Content) != 1 || p.Content[0].Type != "terminal" ||
			p.Content[0].Meta.Output != "partial\n" || p.Content[0].Meta.ExitCode == nil || *p.Content[0].Meta.ExitCode != 3 {
			t.Errorf("non-zero exit: %+v\n%s", p, stdout)
		}
	})
	t.Run("session log", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.New(t, failingBashTurns(sleepMarker(30)))
		state := t.TempDir()
		if _, stderr, code := runDefaultBinaryIn(t, t.TempDir(), state, srv, "run", "go"); code != 0 {
			t.Fatalf("exit %d:\n%s", code, stderr)
		}
		logs, _ := filepath.Glob(filepath.Join(state, "*", "sessions", "*.jsonl"))
		if len(logs) != 1 {
			t.Fatalf("session logs under %s: %q", state, logs)
		}
		b, err := os.ReadFile(logs[0])
		if err != nil {
			t.Fatal(err)
		}
		type result struct {
			Type         string `json:"type"`
			CallID       string `json:"callId"`
			IsError      bool   `json:"isError"`
			Presentation *struct {
				Status  string            `json:"status"`
				Kind    string            `json:"kind"`
				Title   string            `json:"title"`
				Content []json.RawMessage `json:"content"`
				Meta    struct {
					Reason string `json:"reason"`
				} `json:"_meta"`
			} `json:"presentation"`
		}
		got := map[string]result{}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var r result
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			if r.Type == "tool/result" {
				got[r.CallID] = r
			}
		}
		for id, reason := range map[string]string{"slow": "timed out after 300ms", "exit3": "exit code 3"} {
			r := got[id]
			if p := r.Presentation; p == nil || p.Status != "failed" || p.Meta.Reason != reason || p.Kind != "execute" || p.Content != nil {
				t.Errorf("tool/result record of %s: %+v, want failed: %s (and no content)\n%s", id, p, reason, b)
			}
		}
	})
	t.Run("json", func(t *testing.T) {
		t.Parallel()
		srv := llmtest.New(t, failingBashTurns(sleepMarker(30)))
		stdout, stderr, code := runDefaultBinary(t, t.TempDir(), srv, "run", "-o", "json", "go")
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, stderr)
		}
		var r struct {
			Failures []struct {
				Tool   string `json:"tool_name"`
				ID     string `json:"tool_use_id"`
				Reason string `json:"reason"`
			} `json:"toolFailures"`
		}
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatalf("%v: %s", err, stdout)
		}
		if len(r.Failures) != 2 || r.Failures[0].ID != "slow" || r.Failures[0].Reason != "timed out after 300ms" ||
			r.Failures[1].ID != "exit3" || r.Failures[1].Reason != "exit code 3" || r.Failures[1].Tool != "bash" {
			t.Errorf("toolFailures %+v\n%s", r.Failures, stdout)
		}
	})
}

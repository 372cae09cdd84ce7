package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// A token budget is per session, not per process: after a first run spent
// N tokens, `run --continue --max-tokens N` in a new process exits 4 with
// reason budget and sends no request. On the default manifest's route,
// which ships no prices, `--max-cost` is a configuration error (exit 2)
// naming the route.
func TestTokenBudgetHoldsAcrossResumes(t *testing.T) {
	t.Parallel()
	needTools(t, "bwrap")
	p := newProject(t, map[string]string{"README.md": "# demo\n"})
	srv := llmtest.New(t, nil, llmtest.WithCheck(llmtest.DeepSeekReasoningCheck))
	writeFile(t, filepath.Join(p.home, ".config", "harness", "harness.yml"), "- {id: deepseek, config: {baseURL: '"+srv.URL+"', maxRetries: 0}}\n")

	srv.Enqueue(read("c1", "README.md"), answer("A demo."))
	var first struct {
		Usage struct {
			PromptTokens     int64 `json:"promptTokens"`
			CompletionTokens int64 `json:"completionTokens"`
		} `json:"usage"`
	}
	out := p.runWith(t, srv, "run", "-o", "json", "What is this project?")
	if err := json.Unmarshal([]byte(out), &first); err != nil || first.Usage.PromptTokens == 0 {
		t.Fatalf("first run's usage (%v):\n%s", err, out)
	}
	spent := first.Usage.PromptTokens + first.Usage.CompletionTokens

	code, stdout, stderr := p.runCode(t, "run", "--continue", "-o", "json", "--max-tokens", strconv.FormatInt(spent, 10), "And now?")
	var res struct {
		Reason string `json:"reason"`
		Error  string `json:"error"`
	}
	_ = json.Unmarshal([]byte(stdout), &res)
	if code != 4 || res.Reason != "budget" || !strings.Contains(res.Error, "("+strconv.FormatInt(spent, 10)+" spent") {
		t.Fatalf("resumed run: exit %d, result %s\nstderr: %s", code, stdout, stderr)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("%d requests, want the first run's 2", n)
	}

	code, _, stderr = p.runCode(t, "run", "--max-cost", "1", "hi")
	if code != 2 || !strings.Contains(stderr, "--max-cost 1:") || !strings.Contains(stderr, "has no prices") {
		t.Fatalf("--max-cost on the default route: exit %d\nstderr: %s", code, stderr)
	}
}

// runCode runs the harness binary with args in the project and returns
// its exit code, stdout and stderr.
func (p *project) runCode(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, harnessBinary(t), args...)
	cmd.Dir, cmd.Env = p.dir, p.env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("harness %v: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

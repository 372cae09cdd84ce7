package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dshgo/harness/internal/cli"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// usageCall is a read tool call whose stream reports usage u.
func usageCall(id string, u llmtest.Usage) llmtest.Turn {
	return llmtest.Stream(llmtest.ToolCallStart(0, id, "read", `{"file_path":"a.txt"}`), llmtest.FinishWithUsage("tool_calls", u))
}

// `run --max-tokens` stops before the call that would pass the cap: exit
// 4, the json result's reason "budget"; `run --max-cost` stops the same way
// on a priced route (stream-json shows the budget event) and is a
// configuration error (exit 2, naming the flag, the route and prices) on a
// route without prices.
func TestRunBudgetExitCodeAndJSON(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "alpha\n"})
	small := llmtest.Usage{PromptTokens: 3000, CompletionTokens: 10, TotalTokens: 3010}
	big := llmtest.Usage{PromptTokens: 30000, CompletionTokens: 1000, TotalTokens: 31000}

	t.Run("max-tokens", func(t *testing.T) {
		srv := llmtest.New(t, []llmtest.Turn{usageCall("c1", small), usageCall("c2", small), usageCall("c3", small), text("never")})
		r := runAgent(t, repo, agentManifest(srv.URL, t.TempDir(), ""), "", "run", "--max-tokens", "10000", "-o", "json", "read a.txt")
		if r.code != cli.ExitBudget {
			t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, cli.ExitBudget, r.stdout, r.stderr)
		}
		var res agent.Result
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
			t.Fatalf("json result: %v\n%s", err, r.stdout)
		}
		if res.Reason != "budget" || !res.IsError || res.Steps != 3 || !strings.Contains(res.Error, "maxTokens 10000") {
			t.Fatalf("result = %+v", res)
		}
		if n := len(srv.Requests()); n != 3 {
			t.Fatalf("the model saw %d requests, want 3", n)
		}
	})

	t.Run("text output", func(t *testing.T) {
		srv := llmtest.New(t, []llmtest.Turn{usageCall("c1", small), usageCall("c2", small), usageCall("c3", small), text("never")})
		r := runAgent(t, repo, agentManifest(srv.URL, t.TempDir(), ""), "", "run", "--max-tokens", "10000", "read a.txt")
		if r.code != cli.ExitBudget || !strings.Contains(r.stderr, "harness: budget 9") || !strings.Contains(r.stderr, "% used: ") ||
			!strings.Contains(r.stderr, "harness: budget exceeded: the next model call would bring the session to ") {
			t.Fatalf("exit %d, stderr lacks the warning or the stop:\n%s", r.code, r.stderr)
		}
	})

	t.Run("max-cost", func(t *testing.T) {
		srv := llmtest.New(t, []llmtest.Turn{usageCall("c1", big), usageCall("c2", big), text("never")})
		priced := strings.Replace(agentManifest(srv.URL, t.TempDir(), ""), "contextWindow: 1000000}",
			"contextWindow: 1000000, prices: {cacheHit: 1, cacheMiss: 10, output: 20}}", 1)
		r := runAgent(t, repo, priced, "", "run", "--max-cost", "0.9", "-o", "stream-json", "read a.txt")
		if r.code != cli.ExitBudget {
			t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, cli.ExitBudget, r.stdout, r.stderr)
		}
		if n := len(srv.Requests()); n != 2 {
			t.Fatalf("the model saw %d requests, want 2", n)
		}
		var stop, result *agent.Event
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			var e agent.Event
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("%v: %s", err, line)
			}
			switch e.Type {
			case agent.EventBudget:
				stop = &e
			case agent.EventResult:
				result = &e
			}
		}
		if stop == nil || stop.Budget.Kind != agent.BudgetCost || !stop.Budget.Exceeded || stop.Budget.Limit != 0.9 {
			t.Fatalf("budget event = %+v\n%s", stop, r.stdout)
		}
		if result == nil || result.Result.Reason != "budget" || result.Result.TotalCostUSD == nil || *result.Result.TotalCostUSD > 0.9 {
			t.Fatalf("result = %+v", result)
		}
	})

	t.Run("max-cost without prices", func(t *testing.T) {
		srv := llmtest.New(t, nil)
		r := runAgent(t, repo, agentManifest(srv.URL, t.TempDir(), ""), "", "run", "--max-cost", "0.5", "hi")
		if r.code != cli.ExitUsage {
			t.Fatalf("exit %d, want 2\nstderr: %s", r.code, r.stderr)
		}
		for _, s := range []string{"--max-cost 0.5", "route test/m1 has no prices"} {
			if !strings.Contains(r.stderr, s) {
				t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
			}
		}
		if n := len(srv.Requests()); n != 0 {
			t.Fatalf("the model saw %d requests", n)
		}
	})

	t.Run("bad agent row", func(t *testing.T) {
		m := strings.Replace(agentManifest("http://127.0.0.1:1", t.TempDir(), ""), "  - name: agent\n", "  - name: agent\n    config: {budget: {maxTokens: -5}}\n", 1)
		r := runAgent(t, repo, m, "", "run", "hi")
		if r.code != cli.ExitUsage || !strings.Contains(r.stderr, "budget.maxTokens: must not be negative, got -5") {
			t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
		}
	})

	t.Run("bad flag", func(t *testing.T) {
		r := runAgent(t, repo, agentManifest("http://127.0.0.1:1", t.TempDir(), ""), "", "run", "--max-tokens", "-1", "hi")
		if r.code != cli.ExitUsage || !strings.Contains(r.stderr, "--max-tokens -1: must not be negative") {
			t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
		}
	})
}

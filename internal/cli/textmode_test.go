package cli_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// Text output: the model's reasoning goes to stderr (plain when stderr is
// not a terminal) before the tool lines; stdout stays the answer only.
// --hide-reasoning drops it.
func TestReasoningOnStderrAndHideReasoning(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	turns := func() []llmtest.Turn {
		return []llmtest.Turn{
			toolCall("c1", "read", `{"file_path":"a.txt"}`).WithReasoning("I should read a.txt first."),
			text("the file says a").WithReasoning("Now I can answer."),
		}
	}
	r := runAgent(t, repo, agentManifest(llmtest.New(t, turns()).URL, t.TempDir(), ""), "", "run", "what is in a.txt?")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if r.stdout != "the file says a\n" {
		t.Fatalf("stdout %q: want the answer only", r.stdout)
	}
	want := "I should read a.txt first.\n→ read a.txt\n"
	if !strings.HasPrefix(r.stderr, want) || !strings.Contains(r.stderr, "  ✓ read: ") ||
		!strings.Contains(r.stderr, "\nNow I can answer.\n[2 steps · ") || strings.Contains(r.stderr, "\x1b[") {
		t.Fatalf("stderr %q: want the reasoning, plain, before the tool lines", r.stderr)
	}

	r = runAgent(t, repo, agentManifest(llmtest.New(t, turns()).URL, t.TempDir(), ""), "", "run", "--hide-reasoning", "what is in a.txt?")
	if r.code != 0 || r.stdout != "the file says a\n" {
		t.Fatalf("exit %d, stdout %q: %s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "read a.txt first") || strings.Contains(r.stderr, "Now I can answer") || !strings.HasPrefix(r.stderr, "→ read ") {
		t.Fatalf("--hide-reasoning: stderr %q", r.stderr)
	}
}

// With prices on the route, the text summary line shows the turn's cost
// and json / stream-json results carry totalCostUsd (usage 900 prompt + 12
// completion tokens at $2 / $10 per 1M = $0.00192). Without prices the
// field is absent and the line has no cost.
func TestCostInSummaryLineAndJSON(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	priced := func(url string) string {
		m := agentManifest(url, t.TempDir(), "")
		return strings.Replace(m, "{name: m1, default: true, contextWindow: 1000000}",
			"{name: m1, default: true, contextWindow: 1000000, prices: {cacheMiss: 2, output: 10}}", 1)
	}
	const want = 0.00192

	r := runAgent(t, repo, priced(llmtest.New(t, []llmtest.Turn{text("hi")}).URL), "", "run", "say hi")
	if r.code != 0 || r.stdout != "hi\n" || !strings.Contains(r.stderr, "[1 step · 912 tokens · ") || !strings.Contains(r.stderr, " · $0.0019]\n") {
		t.Fatalf("text: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}

	r = runAgent(t, repo, priced(llmtest.New(t, []llmtest.Turn{text("hi")}).URL), "", "run", "-o", "json", "say hi")
	var res struct {
		TotalCostUSD *float64 `json:"totalCostUsd"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.TotalCostUSD == nil || math.Abs(*res.TotalCostUSD-want) > 1e-12 {
		t.Fatalf("json: %v %q", err, r.stdout)
	}

	r = runAgent(t, repo, priced(llmtest.New(t, []llmtest.Turn{text("hi")}).URL), "", "run", "-o", "stream-json", "say hi")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var ev struct {
		Type   string `json:"type"`
		Result struct {
			TotalCostUSD *float64 `json:"totalCostUsd"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &ev); err != nil || ev.Type != "result" || ev.Result.TotalCostUSD == nil || math.Abs(*ev.Result.TotalCostUSD-want) > 1e-12 {
		t.Fatalf("stream-json: %v %q", err, lines[len(lines)-1])
	}

	// No prices: nothing is said about cost.
	r = runAgent(t, repo, agentManifest(llmtest.New(t, []llmtest.Turn{text("hi")}).URL, t.TempDir(), ""), "", "run", "-o", "json", "say hi")
	if r.code != 0 || strings.Contains(r.stdout, "totalCostUsd") {
		t.Fatalf("json without prices: %q", r.stdout)
	}
	r = runAgent(t, repo, agentManifest(llmtest.New(t, []llmtest.Turn{text("hi")}).URL, t.TempDir(), ""), "", "run", "say hi")
	if r.code != 0 || !strings.Contains(r.stderr, "[1 step · 912 tokens · ") || strings.Contains(r.stderr, "$") {
		t.Fatalf("text without prices: %q", r.stderr)
	}
}

// The provider's cache split reaches the user: the summary line shows the
// hit share, the json result carries usage.cacheHitTokens and
// usage.cacheMissTokens, and totalCostUsd prices hits and misses apart
// (800 hits at $0.5, 100 misses at $2, 12 completion at $10 per 1M =
// $0.00072), from DeepSeek's and from OpenAI's usage shapes.
func TestCacheSplitInSummaryJSONAndCost(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	priced := func(url string) string {
		m := agentManifest(url, t.TempDir(), "")
		return strings.Replace(m, "{name: m1, default: true, contextWindow: 1000000}",
			"{name: m1, default: true, contextWindow: 1000000, prices: {cacheHit: 0.5, cacheMiss: 2, output: 10}}", 1)
	}
	const want = 0.00072
	for name, u := range map[string]llmtest.Usage{
		"deepseek": {PromptTokens: 900, CompletionTokens: 12, TotalTokens: 912, PromptCacheHitTokens: 800, PromptCacheMissTokens: 100},
		"openai":   {PromptTokens: 900, CompletionTokens: 12, TotalTokens: 912, PromptTokensDetails: &llmtest.TokenDetails{CachedTokens: 800}},
	} {
		turn := func() llmtest.Turn {
			return llmtest.Stream(llmtest.TextDelta("hi"), llmtest.FinishWithUsage("stop", u))
		}
		r := runAgent(t, repo, priced(llmtest.New(t, []llmtest.Turn{turn()}).URL), "", "run", "say hi")
		if r.code != 0 || !strings.Contains(r.stderr, "[1 step · 912 tokens · cache 89% · ") {
			t.Fatalf("%s: text: exit %d stderr %q", name, r.code, r.stderr)
		}
		r = runAgent(t, repo, priced(llmtest.New(t, []llmtest.Turn{turn()}).URL), "", "run", "-o", "json", "say hi")
		var res struct {
			Usage struct {
				CacheHitTokens  int64 `json:"cacheHitTokens"`
				CacheMissTokens int64 `json:"cacheMissTokens"`
			} `json:"usage"`
			TotalCostUSD *float64 `json:"totalCostUsd"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.Usage.CacheHitTokens != 800 || res.Usage.CacheMissTokens != 100 ||
			res.TotalCostUSD == nil || math.Abs(*res.TotalCostUSD-want) > 1e-12 {
			t.Fatalf("%s: json: %v %q", name, err, r.stdout)
		}
	}
}

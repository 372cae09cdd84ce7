package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// Value completion through cobra's __complete: --model offers the
// manifest's routes and aliases, -o the three formats, --session and
// --fork the stored session ids newest first (with their first prompt).
func TestValueCompletionOfModelOutputAndSession(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	state := t.TempDir()
	manifest := func(url string) string {
		return strings.Replace(agentManifest(url, state, ""), "        - {name: m1, default: true, contextWindow: 1000000}",
			"        - {name: m1, contextWindow: 1000000}\n        - {name: m2, default: true, aliases: [{name: quick}]}", 1)
	}

	r := runAgent(t, repo, manifest("http://127.0.0.1:1"), "", "__complete", "run", "--model", "")
	want := "test\tdefault model m2\ntest/m1\ntest/m2\ntest/quick\talias of m2\n:4\n"
	if r.code != 0 || !strings.HasPrefix(r.stdout, want) {
		t.Fatalf("--model: exit %d %q, want %q", r.code, r.stdout, want)
	}
	r = runAgent(t, repo, manifest("http://127.0.0.1:1"), "", "__complete", "run", "-o", "")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "text\t") || !strings.Contains(r.stdout, "\njson\t") || !strings.Contains(r.stdout, "\nstream-json\t") || !strings.Contains(r.stdout, "\n:4\n") {
		t.Fatalf("-o: exit %d %q", r.code, r.stdout)
	}

	// Two sessions, the second newer.
	var ids []string
	for _, prompt := range []string{"first prompt", "second prompt"} {
		r := runAgent(t, repo, manifest(llmtest.New(t, []llmtest.Turn{text("ok")}).URL), "", "run", "-o", "json", prompt)
		var res struct {
			SessionID string `json:"sessionId"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &res); r.code != 0 || err != nil || res.SessionID == "" {
			t.Fatalf("run: exit %d %q %s", r.code, r.stdout, r.stderr)
		}
		ids = append(ids, res.SessionID)
	}
	for _, args := range [][]string{{"run", "--session", ""}, {"chat", "--session", ""}, {"run", "--fork", ""}} {
		r := runAgent(t, repo, manifest("http://127.0.0.1:1"), "", append([]string{"__complete"}, args...)...)
		want := ids[1] + "\tsecond prompt\n" + ids[0] + "\tfirst prompt\n:4\n"
		if r.code != 0 || !strings.HasPrefix(r.stdout, want) {
			t.Fatalf("%v: exit %d %q, want %q", args, r.code, r.stdout, want)
		}
	}
}

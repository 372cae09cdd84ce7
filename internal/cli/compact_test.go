package cli_test

import (
	"strings"
	"testing"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// On demand: chat's /compact, `harness compact --continue` and `run
// --compact --continue` each summarize the older history (one summary
// request each), and the next request starts with the summary.
func TestCompactOnDemand(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	state := t.TempDir()
	summary := func(s string) llmtest.Turn { return llmtest.Reply("summary " + s) }
	srv := llmtest.New(t, []llmtest.Turn{
		text("one"), text("two"), summary("A"), text("three"), summary("B"), text("more"), summary("C"), text("four"),
	})
	m := agentManifest(srv.URL, state, "  - name: compaction\n    config: {keepRecent: 0}\n")
	c := runAgent(t, repo, m, "first\nsecond\n/compact focus on a.txt\nthird\n/exit\n", "chat")
	if c.code != 0 || !strings.Contains(c.stdout, "compacted: ") {
		t.Fatalf("chat: %d\n%s\n%s", c.code, c.stdout, c.stderr)
	}
	w, _ := srv.Requests()[2].Wire()
	if !strings.Contains(w.Messages[0].Text(), "focus on a.txt") || len(w.Tools) != 0 {
		t.Fatalf("summary request: %s", w.Messages[0].Text())
	}
	w, _ = srv.Requests()[3].Wire()
	if !strings.HasPrefix(w.History(), "user:[This session was compacted") || !strings.Contains(w.History(), "summary A") {
		t.Fatalf("after /compact: %s", w.History())
	}
	if r := runAgent(t, repo, m, "", "compact", "--continue"); r.code != 0 || !strings.Contains(r.stdout, "compacted session ") {
		t.Fatalf("harness compact: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := runAgent(t, repo, m, "", "run", "--continue", "more"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r := runAgent(t, repo, m, "", "run", "--continue", "--compact", "four?")
	if r.code != 0 || !strings.Contains(r.stderr, "compacted session ") || !strings.Contains(r.stdout, "four") {
		t.Fatalf("run --compact: %d %s %s", r.code, r.stdout, r.stderr)
	}
	w, _ = srv.Requests()[7].Wire()
	if !strings.Contains(w.History(), "summary C") || strings.Contains(w.History(), "summary B") {
		t.Fatalf("after run --compact: %s", w.History())
	}
	if r := runAgent(t, repo, m, "", "compact"); r.code != 2 {
		t.Fatalf("compact without a session: %d", r.code)
	}
}

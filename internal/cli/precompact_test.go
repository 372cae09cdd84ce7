package cli_test

import (
	"strings"
	"testing"

	"github.com/dshgo/harness/internal/hookstest"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// A PreCompact command hook configured on the hooks row of harness.yml:
// `harness compact --continue INSTRUCTIONS` runs it with Claude Code's
// payload (trigger "manual", custom_instructions), its exit 2 cancels the
// compaction with its reason (exit code 1, no summary request, the next
// request still carries the whole history), and a compaction it allows goes
// ahead.
func TestCompactRunsPreCompactHook(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	state := t.TempDir()
	hook := hookstest.NewScript(t, hookstest.Rule{
		Contains: []string{`"custom_instructions":"keep everything"`},
		Stderr:   "not now: keep the history whole", Exit: 2,
	})
	srv := llmtest.New(t, []llmtest.Turn{text("one"), text("two"), llmtest.Reply("summary A"), text("three")})
	m := agentManifest(srv.URL, state, `  - name: compaction
    config: {keepRecent: 0}
  - name: hooks
    config:
      hooks:
        PreCompact:
          - matcher: manual
            hooks:
              - {type: command, command: '`+hook.Path+`'}
`)
	if r := runAgent(t, repo, m, "", "run", "first"); r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	if r := runAgent(t, repo, m, "", "run", "--continue", "second"); r.code != 0 {
		t.Fatalf("run --continue: %d %s", r.code, r.stderr)
	}
	r := runAgent(t, repo, m, "", "compact", "--continue", "keep everything")
	if r.code == 0 || !strings.Contains(r.stderr, "not now: keep the history whole") {
		t.Fatalf("blocked compact: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("a blocked compaction sent a request: %d requests", n)
	}
	if r := runAgent(t, repo, m, "", "compact", "--continue", "focus on a.txt"); r.code != 0 || !strings.Contains(r.stdout, "compacted session ") {
		t.Fatalf("allowed compact: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if r := runAgent(t, repo, m, "", "run", "--continue", "third"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	w, _ := srv.Requests()[3].Wire()
	if !strings.Contains(w.History(), "summary A") || strings.Contains(w.History(), "user:first") {
		t.Fatalf("after the allowed compaction: %s", w.History())
	}
	payloads := hook.PreCompacts(t)
	if len(payloads) != 2 {
		t.Fatalf("hook ran %d times:\n%s", len(payloads), strings.Join(hook.Lines(t), "\n"))
	}
	for i, instr := range []string{"keep everything", "focus on a.txt"} {
		if bad := payloads[i].Mismatch("manual", instr, repo, ""); bad != "" {
			t.Errorf("payload %d: %s: %s", i+1, bad, hook.Lines(t)[i])
		}
	}
}

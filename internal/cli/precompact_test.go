package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// A PreCompact command hook configured on the hooks row of harness.yml:
// `harness compact --continue INSTRUCTIONS` runs it with Claude Code's
// payload (trigger "manual", custom_instructions), its exit 2 cancels the
// compaction with its reason (exit code 1, no summary request, the next
// request still carries the whole history), and a compaction it allows goes
// ahead.
func TestCompactRunsPreCompactHook(t *testing.T) {
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	state := t.TempDir()
	dir := t.TempDir()
	payloads := filepath.Join(dir, "payloads")
	hook := filepath.Join(dir, "pre-compact.sh")
	body := `#!/usr/bin/env bash
input=$(cat)
printf '%s\n' "$input" >> "` + payloads + `"
case "$input" in
  *'"custom_instructions":"keep everything"'*) echo "not now: keep the history whole" >&2; exit 2 ;;
esac
exit 0
`
	if err := os.WriteFile(hook, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.New(t, []llmtest.Turn{text("one"), text("two"), llmtest.Reply("summary A"), text("three")})
	m := agentManifest(srv.URL, state, `  - name: compaction
    config: {keepRecent: 0}
  - name: hooks
    config:
      hooks:
        PreCompact:
          - matcher: manual
            hooks:
              - {type: command, command: '`+hook+`'}
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
	raw, err := os.ReadFile(payloads)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != 2 {
		t.Fatalf("hook ran %d times:\n%s", len(lines), raw)
	}
	for i, instr := range []string{"keep everything", "focus on a.txt"} {
		for _, want := range []string{`"hook_event_name":"PreCompact"`, `"trigger":"manual"`, `"custom_instructions":"` + instr + `"`,
			`"cwd":"` + repo + `"`, `"session_id":"`, `"transcript_path":"/`} {
			if !strings.Contains(lines[i], want) {
				t.Errorf("payload %d lacks %s: %s", i+1, want, lines[i])
			}
		}
	}
}

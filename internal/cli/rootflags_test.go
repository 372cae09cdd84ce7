package cli_test

import (
	"strings"
	"testing"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// `harness` alone takes chat's flags, as docs/cli.md says: `harness
// --permission-mode bypass` is `harness chat --permission-mode bypass` (a
// call the headless approver refuses runs), and `harness --model ...` a
// chat on that route; without flags and without a terminal it still prints
// the help.
func TestRootTakesChatFlags(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	const rows = "  - name: approval\n    config: {answerer: headless}\n  - name: permission\n"
	toolResult := func(t *testing.T, args ...string) (string, runOut) {
		t.Helper()
		srv := llmtest.New(t, []llmtest.Turn{
			toolCall("c1", "bash", `{"command":"echo root-flag-marker","description":"say it"}`),
			text("done"),
		})
		r := runAgent(t, repo, agentManifest(srv.URL, t.TempDir(), rows), "go\n/exit\n", append(args, "--cwd", repo)...)
		if r.code != 0 || !strings.Contains(r.stdout, "done") {
			t.Fatalf("%q: exit %d\nstdout %s\nstderr %s", args, r.code, r.stdout, r.stderr)
		}
		for _, req := range srv.Requests() {
			w, _ := req.Wire()
			for _, m := range w.Messages {
				if m.Role == "tool" && m.ToolCallID == "c1" {
					return m.Text(), r
				}
			}
		}
		t.Fatalf("no tool result; stderr %s", r.stderr)
		return "", r
	}
	if got, _ := toolResult(t, "--permission-mode", "default"); strings.HasPrefix(got, "root-flag-marker") {
		t.Fatalf("mode default: the headless approver should refuse the call: %q", got)
	}
	if got, r := toolResult(t, "--permission-mode", "bypass"); !strings.HasPrefix(got, "root-flag-marker") {
		t.Fatalf("harness --permission-mode bypass: tool result %q\nstderr %s", got, r.stderr)
	}
	if got, r := toolResult(t, "--allowed-tools", "bash(echo *)", "--model", "test/m1"); !strings.HasPrefix(got, "root-flag-marker") {
		t.Fatalf("harness --allowed-tools: tool result %q\nstderr %s", got, r.stderr)
	}
	r := runAgent(t, repo, agentManifest("http://127.0.0.1:1", t.TempDir(), rows), "")
	if r.code != 0 || !strings.Contains(r.stdout, "Usage:") || !strings.Contains(r.stdout, "--permission-mode") {
		t.Fatalf("harness alone, no terminal: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	r = runAgent(t, repo, agentManifest("http://127.0.0.1:1", t.TempDir(), rows), "", "--permission-mode", "yolo")
	if r.code != 2 || !strings.Contains(r.stderr, `--permission-mode "yolo": not a mode`) {
		t.Fatalf("bad mode: exit %d, stderr %s", r.code, r.stderr)
	}
}

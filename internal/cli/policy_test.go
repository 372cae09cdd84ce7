package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// B17 end to end: a deny wins whatever the hook order, the allowed parallel
// call runs, the audit hook sees both calls, a PostToolUse rewrite is what
// the model and the stored transcript get; SessionStart context reaches the
// model.
func TestB17DenyWinsThroughHarnessRun(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	target := filepath.Join(t.TempDir(), "b17-target")
	if err := os.MkdirAll(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	hooksDir, _ := filepath.Abs("../../examples/hooks")
	extra := `  - name: approval
    config: {answerer: headless}
  - name: permission
    config:
      allow: ["bash(echo *)"]
      deny: ["bash(rm -rf *)"]
  - name: hooks
    config:
      hooks:
        PreToolUse:
          - hooks:
              - {type: command, command: '` + hooksDir + `/allow-all.sh'}
          - matcher: "Bash"
            hooks:
              - {type: command, command: '` + hooksDir + `/deny-rm-rf.sh'}
          - hooks:
              - {type: command, command: '` + hooksDir + `/audit.sh'}
        PostToolUse:
          - hooks:
              - {type: command, command: '` + hooksDir + `/redact-secrets.sh'}
        SessionStart:
          - hooks:
              - {type: command, command: '` + hooksDir + `/session-context.sh'}
`
	srv := llmtest.New(t, []llmtest.Turn{
		llmtest.Stream(
			llmtest.ToolCallStart(0, "c1", "bash", `{"command":"echo ok","description":"say ok"}`),
			llmtest.ToolCallStart(1, "c2", "bash", `{"command":"rm -rf `+target+`","description":"remove it"}`),
			llmtest.Finish("tool_calls")),
		toolCall("c3", "bash", `{"command":"echo sk-b17-secret","description":"print a secret"}`),
		text("done"),
	})
	state := t.TempDir()
	r := runAgent(t, repo, agentManifest(srv.URL, state, extra), "", "run", "clean up")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(target, "keep")); err != nil {
		t.Fatalf("the rm ran: %v", err)
	}
	results := map[string]string{}
	for _, req := range srv.Requests() {
		w, _ := req.Wire()
		for _, m := range w.Messages {
			if m.Role == "tool" {
				results[m.ToolCallID] = m.Text()
			}
		}
	}
	if !strings.Contains(results["c1"], "ok") || strings.HasPrefix(results["c1"], "Error:") {
		t.Errorf("echo ok: %q", results["c1"])
	}
	if !strings.HasPrefix(results["c2"], "Error:") || !strings.Contains(results["c2"], "rm -rf") {
		t.Errorf("rm: %q", results["c2"])
	}
	if strings.Contains(results["c3"], "sk-b17-secret") || !strings.Contains(results["c3"], "[REDACTED]") {
		t.Errorf("secret: %q", results["c3"])
	}
	audit, _ := os.ReadFile(filepath.Join(repo, ".harness-audit.log"))
	if n := strings.Count(string(audit), "PreToolUse"); n < 2 {
		t.Errorf("audit log:\n%s", audit)
	}
	list, _ := agent.ListSessions(state)
	raw, _ := os.ReadFile(list[0].Path)
	if strings.Contains(string(raw), "sk-b17-secret\\n\"") || strings.Contains(string(raw), `"content":"sk-b17-secret`) {
		t.Errorf("the stored transcript has the secret:\n%s", raw)
	}
	w, _ := srv.Requests()[0].Wire()
	found := false
	for _, m := range w.Messages {
		found = found || (m.Role == "user" && strings.Contains(m.Text(), "current git branch:"))
	}
	if !found {
		t.Errorf("SessionStart context missing from request 1: %+v", w.Messages)
	}
}

// --yes answers approval questions with "allow once"; deny rules still win.
func TestRunYesApprovesAsksButNotDenies(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	extra := `  - name: approval
    config: {answerer: headless}
  - name: permission
    config:
      deny: ["bash(rm *)"]
`
	script := func() []llmtest.Turn {
		return []llmtest.Turn{
			llmtest.Stream(
				llmtest.ToolCallStart(0, "c1", "bash", `{"command":"touch made-by-bash","description":"make a file"}`),
				llmtest.ToolCallStart(1, "c2", "bash", `{"command":"rm a.txt","description":"remove a file"}`),
				llmtest.Finish("tool_calls")),
			text("done"),
		}
	}
	results := func(srv *llmtest.Server) map[string]string {
		w, _ := srv.Requests()[1].Wire()
		out := map[string]string{}
		for _, m := range w.Messages {
			if m.Role == "tool" {
				out[m.ToolCallID] = m.Text()
			}
		}
		return out
	}
	srv := llmtest.New(t, script())
	if r := runAgent(t, repo, agentManifest(srv.URL, t.TempDir(), extra), "", "run", "go"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	res := results(srv)
	if !strings.HasPrefix(res["c1"], "Error:") || !strings.Contains(res["c1"], "approval") {
		t.Fatalf("without --yes the ask must be refused headless: %q", res["c1"])
	}
	srv = llmtest.New(t, script())
	if r := runAgent(t, repo, agentManifest(srv.URL, t.TempDir(), extra), "", "run", "--yes", "go"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	res = results(srv)
	if strings.HasPrefix(res["c1"], "Error:") {
		t.Fatalf("--yes: %q", res["c1"])
	}
	if !strings.HasPrefix(res["c2"], "Error:") {
		t.Fatalf("--yes must not override a deny: %q", res["c2"])
	}
	if _, err := os.Stat(filepath.Join(repo, "made-by-bash")); err != nil {
		t.Fatal("the approved command did not run")
	}
	if _, err := os.Stat(filepath.Join(repo, "a.txt")); err != nil {
		t.Fatal("the denied command ran")
	}
}

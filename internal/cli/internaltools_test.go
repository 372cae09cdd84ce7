package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness"
	"github.com/dshgo/harness/internal/cli"
	"github.com/dshgo/harness/plugins/std"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// The default configuration, headless, no -y: todo_write and task change
// only the agent's own state, so they run without asking (Claude Code
// never asks for TodoWrite or Task); the child's own tool calls are still
// decided by the parent's policy (its `rm -rf` is denied).
func TestDefaultManifestRunsInternalToolsHeadless(t *testing.T) {
	// Serial: t.Setenv and t.Chdir.
	work, state := t.TempDir(), t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("DEEPSEEK_API_KEY", "sk-test")
	if err := os.WriteFile(filepath.Join(work, "keep.txt"), []byte("k\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	list := `{"todos":[{"content":"Look around","status":"in_progress","activeForm":"Looking around"}]}`
	task := `{"description":"look","prompt":"delete keep.txt","subagent_type":"general-purpose"}`
	srv := llmtest.New(t, []llmtest.Turn{
		toolCall("c1", "todo_write", list),
		toolCall("c2", "task", task),
		// The child's turns: it tries a denied command, then answers.
		toolCall("k1", "bash", `{"command":"rm -rf keep.txt","description":"delete"}`),
		text("child done"),
		text("parent done"),
	})
	patch := filepath.Join(t.TempDir(), "p.yml")
	if err := os.WriteFile(patch, []byte("- {id: deepseek, config: {baseURL: "+srv.URL+", maxRetries: 0}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	env := &cli.Env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""), DefaultManifest: harness.DefaultManifest, Plugins: std.Plugins(),
		LookupEnv: os.LookupEnv, Ctx: context.Background()}
	t.Chdir(work)
	code := cli.Run([]string{"run", "--patch", patch, "-o", "stream-json", "go"}, env)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	got := out.String()
	if strings.Contains(got, "requires approval") && !strings.Contains(got, "rm -rf") {
		t.Fatalf("an internal tool was asked:\n%s", got)
	}
	if !strings.Contains(got, "Todo list updated") {
		t.Fatalf("todo_write did not run:\n%s", got)
	}
	if !strings.Contains(got, "child done") {
		t.Fatalf("task did not run the child:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(work, "keep.txt")); err != nil {
		t.Fatalf("the child's denied rm ran: %v", err)
	}
	if !strings.Contains(got, `permission denied: rule \"bash(rm -rf *)\"`) {
		t.Fatalf("the child's rm was not denied by the parent's policy:\n%s", got)
	}
}

// The acceptance line: on the default manifest, headless, a bash
// call that asks to leave the sandbox is denied even though the shipped
// allow list covers `git status`, and the hint names the `unsandboxed` form.
func TestDefaultManifestDeniesLeavingTheSandboxHeadless(t *testing.T) {
	// Serial: runDefault uses t.Setenv and t.Chdir.
	out, errOut, code := runDefault(t, "tool", "bash", `{"command":"git status","sandbox":"off","justification":"x"}`)
	all := out + errOut
	if code == 0 || !strings.Contains(all, "person's decision") || !strings.Contains(all, `bash(git status *) unsandboxed`) {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

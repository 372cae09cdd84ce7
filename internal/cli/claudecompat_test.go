package cli_test

import (
	"encoding/json"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// claudeCompatSettings is a project's .claude/settings.json in the shapes
// Claude Code users write: env, permission rules with an additional
// directory, and hooks selected by Claude's tool names (Bash, Edit|Write,
// an MCP tool pattern), commands under $CLAUDE_PROJECT_DIR.
const claudeCompatSettings = `{
  "env": {"COMPAT_FROM_SETTINGS": "settings-value", "COMPAT_SETTINGS_TOKEN": "must-not-leak"},
  "permissions": {
    "allow": ["Bash(echo *)"],
    "deny": ["Bash(rm -rf *)"],
    "additionalDirectories": ["../extra"]
  },
  "hooks": {
    "SessionStart": [{"hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/session-env.sh"}]}],
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [
        {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/bash-validator.sh"},
        {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/json-permission.sh"}
      ]},
      {"matcher": "mcp__fx__.*", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/mcp-guard.sh"}]}
    ],
    "PostToolUse": [
      {"matcher": "Edit|Write|MultiEdit", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/gofmt.sh"}]}
    ]
  },
  "model": "ignored-key"
}`

// TestClaudeCodeCompatibilitySuite runs a repository set up for Claude Code
// through the real `harness run` binary with a scripted model: the hook
// scripts (internal/cli/testdata/claudecompat/hooks, written in the shapes
// of popular public ones, using jq) get Claude Code's input and their
// answers are honoured as Claude Code documents.
func TestClaudeCodeCompatibilitySuite(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if _, err := exec.LookPath("jq"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("jq is not installed; .ci/run installs it")
		}
		t.Skip("jq is not installed (the hook scripts use it; .ci/run installs it)")
	}
	if _, err := exec.LookPath("gofmt"); err != nil {
		t.Fatal("gofmt is not on PATH")
	}
	parent := t.TempDir()
	repo, extra, precious := filepath.Join(parent, "repo"), filepath.Join(parent, "extra"), filepath.Join(parent, "precious")
	for _, d := range []string{filepath.Join(repo, ".claude", "hooks"), extra, precious} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	scripts, err := filepath.Glob(filepath.Join("testdata", "claudecompat", "hooks", "*.sh"))
	if err != nil || len(scripts) != 5 {
		t.Fatalf("hook scripts: %v %v", scripts, err)
	}
	for _, s := range scripts {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, ".claude", "hooks", filepath.Base(s)), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, ".claude", "settings.json"), []byte(claudeCompatSettings), 0o644); err != nil {
		t.Fatal(err)
	}

	unformatted := "package main\nfunc main(){println(\"hi\")}\n"
	calls := []struct{ id, tool, args string }{
		{"write", "write", `{"file_path":"main.go","content":` + jsonString(unformatted) + `}`},
		{"grep", "bash", `{"command":"grep -r TODO .","description":"find todos"}`},
		{"touch", "bash", `{"command":"touch made-by-hook-allow.txt","description":"touch"}`},
		{"push", "bash", `{"command":"git push origin main","description":"push"}`},
		{"env", "bash", `{"command":"env-report","description":"report"}`},
		{"cleanup", "bash", `{"command":"cleanup","description":"clean up"}`},
		{"extra", "write", `{"file_path":"../extra/notes.txt","content":"in an additional directory\n"}`},
		{"outside", "write", `{"file_path":"../elsewhere.txt","content":"outside\n"}`},
		{"mcp", "mcp__fx__echo", `{"text":"hi"}`},
	}
	var turns []llmtest.Turn
	for _, c := range calls {
		turns = append(turns, toolCall(c.id, c.tool, c.args))
	}
	turns = append(turns, text("Done."))
	srv := llmtest.New(t, turns)
	home := t.TempDir()
	manifest := agentManifest(srv.URL, t.TempDir(), `  - name: approval
    config: {answerer: headless}
  - name: permission
    config: {mode: acceptEdits}
  - name: hooks
    config: {hooks: {}}
`+mcpRow(mcpFixture(t), ""))
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8", "TERM=dumb", "COMPAT_OUTER_SECRET_TOKEN=outer"}
	cmd := processCommand(t, repo, manifest, env, "run", "-o", "json", "work through the list")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("harness run: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	reqs := srv.Requests()
	if len(reqs) != len(turns) {
		t.Fatalf("%d model requests, want %d\nstderr: %s", len(reqs), len(turns), stderr.String())
	}
	last, err := reqs[len(reqs)-1].Wire()
	if err != nil {
		t.Fatal(err)
	}
	results := map[string]string{}
	for _, m := range last.Messages {
		if m.Role == "tool" {
			results[m.ToolCallID] = m.Text()
		}
	}
	result := func(id string) string { return results[id] }

	t.Run("PostToolUse formatter rewrites the written file", func(t *testing.T) {
		got, err := os.ReadFile(filepath.Join(repo, "main.go"))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := format.Source([]byte(unformatted))
		if string(got) != string(want) || string(got) == unformatted {
			t.Fatalf("main.go after the hook:\n%s\nwant:\n%s", got, want)
		}
	})
	t.Run("Bash validator blocks by tool_name Bash", func(t *testing.T) {
		if want := "Error: Use 'rg' (ripgrep) instead of 'grep' for better performance and features"; result("grep") != want {
			t.Fatalf("grep result %q", result("grep"))
		}
	})
	t.Run("JSON allow lifts the mode's ask", func(t *testing.T) {
		if _, err := os.Stat(filepath.Join(repo, "made-by-hook-allow.txt")); err != nil {
			t.Fatalf("touch did not run (result %q): %v", result("touch"), err)
		}
	})
	t.Run("JSON ask is asked (headless: denied with the hook's reason)", func(t *testing.T) {
		if r := result("push"); !strings.HasPrefix(r, "Error: pushing publishes commits; approval is required") {
			t.Fatalf("push result %q", r)
		}
	})
	t.Run("SessionStart CLAUDE_ENV_FILE and settings env reach bash; credentials do not", func(t *testing.T) {
		r := result("env")
		if !strings.HasPrefix(r, "hello-from-session-start|settings-value|none|none|") || !strings.Contains(r, ":/opt/compat-bin") {
			t.Fatalf("env report %q", r)
		}
		if strings.Contains(r, "must-not-leak") || strings.Contains(r, "outer") {
			t.Fatalf("a credential reached the command: %q", r)
		}
	})
	t.Run("updatedInput into a denied command is denied", func(t *testing.T) {
		if r := result("cleanup"); !strings.Contains(r, `rule "Bash(rm -rf *)" in the deny list`) {
			t.Fatalf("cleanup result %q", r)
		}
		if _, err := os.Stat(precious); err != nil {
			t.Fatalf("%s is gone: %v", precious, err)
		}
	})
	t.Run("additionalDirectories are writable in acceptEdits", func(t *testing.T) {
		if b, err := os.ReadFile(filepath.Join(extra, "notes.txt")); err != nil || string(b) != "in an additional directory\n" {
			t.Fatalf("extra/notes.txt: %q %v (result %q)", b, err, result("extra"))
		}
		if _, err := os.Stat(filepath.Join(parent, "elsewhere.txt")); err == nil || !strings.HasPrefix(result("outside"), "Error: ") {
			t.Fatalf("a write outside the workspace and the additional directories ran: %q", result("outside"))
		}
	})
	t.Run("MCP tool names are matched as mcp__server__tool", func(t *testing.T) {
		if r := result("mcp"); r != "Error: blocked mcp__fx__echo" {
			t.Fatalf("mcp result %q", r)
		}
	})
	var res map[string]any
	if err := json.Unmarshal(out, &res); err != nil || res["result"] != "Done." {
		t.Fatalf("json result %s: %v", out, err)
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// writeFile writes a file under dir, making its directories.
func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// `harness run /fix-test calc TestAdd`: the command file's body reaches the
// model with $1, $2 and $ARGUMENTS expanded; the prompt lists the project's
// skill; the model loads it with the skill tool, which names its folder,
// and reads a file of that folder.
func TestRunExpandsCommandFileAndModelLoadsSkill(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	repo := gitRepo(t, map[string]string{"go.mod": "module calc\n"})
	writeFile(t, repo, ".claude/commands/fix-test.md", "---\ndescription: Fix a failing Go test\nargument-hint: [package] [test]\nmodel: haiku\n---\nFix the test $2 in package $1 (arguments: $ARGUMENTS). Use the go-testing skill.\n")
	writeFile(t, repo, ".claude/skills/go-testing/SKILL.md", "---\nname: go-testing\ndescription: Write and repair Go tests; use when a go test fails.\nlicense: MIT\n---\n# Go testing\n\nRead checklist.md in this folder first.\n")
	writeFile(t, repo, ".claude/skills/go-testing/checklist.md", "1. run the failing test alone\n")
	dir := filepath.Join(repo, ".claude/skills/go-testing")
	srv := llmtest.New(t, []llmtest.Turn{
		toolCall("c1", "skill", `{"name":"go-testing"}`),
		toolCall("c2", "read", `{"file_path":"`+filepath.Join(dir, "checklist.md")+`"}`),
		text("done"),
	})
	m := agentManifest(srv.URL, t.TempDir(), "  - name: commands\n  - name: skills\n")
	r := runAgent(t, repo, m, "", "run", "/fix-test", "calc", "TestAdd")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "harness: /fix-test: model: haiku is not honoured (the session's route answers)") {
		t.Errorf("stderr lacks the model note:\n%s", r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	last, _ := reqs[2].Wire()
	if got := last.Messages[1].Text(); got != "Fix the test TestAdd in package calc (arguments: calc TestAdd). Use the go-testing skill.\n" {
		t.Fatalf("the user message = %q", got)
	}
	if sys := last.Messages[0].Text(); !strings.Contains(sys, "\n- go-testing: Write and repair Go tests; use when a go test fails.\n") {
		t.Fatalf("the system prompt lacks the skill:\n%s", sys)
	}
	results := map[string]string{}
	for _, msg := range last.Messages {
		if msg.Role == "tool" {
			results[msg.ToolCallID] = msg.Text()
		}
	}
	if want := "Its folder is " + dir + ":"; !strings.Contains(results["c1"], want) || !strings.Contains(results["c1"], "Read checklist.md in this folder first.") {
		t.Fatalf("skill result:\n%s", results["c1"])
	}
	if !strings.Contains(results["c2"], "run the failing test alone") {
		t.Fatalf("read result:\n%s", results["c2"])
	}
}

// A /word that names no command is sent as written; a front-end command
// is a usage error.
func TestRunSendsUnknownSlashWordsAsText(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	repo := gitRepo(t, map[string]string{"go.mod": "module calc\n"})
	srv := llmtest.New(t, []llmtest.Turn{text("ok")})
	m := agentManifest(srv.URL, t.TempDir(), "  - name: commands\n  - name: skills\n")
	if r := runAgent(t, repo, m, "", "run", "/usr/bin/env", "is a path"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	req, _ := srv.Requests()[0].Wire()
	if got := req.Messages[len(req.Messages)-1].Text(); got != "/usr/bin/env is a path" {
		t.Fatalf("prompt = %q", got)
	}
	if r := runAgent(t, repo, m, "", "run", "/model", "x"); r.code != 2 || !strings.Contains(r.stderr, "/model is a command of the interactive front ends") {
		t.Fatalf("/model: exit %d: %s", r.code, r.stderr)
	}
}

// `harness chat` (line mode) runs a command file as the terminal UI does:
// its expanded body is the turn's prompt, and the answer is printed; a
// skill's /name likewise.
func TestChatSendsACommandFilesPrompt(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	repo := gitRepo(t, map[string]string{"go.mod": "module calc\n"})
	writeFile(t, repo, ".claude/commands/greet.md", "Say hello to $1.\n")
	writeFile(t, repo, ".claude/skills/tidy/SKILL.md", "---\nname: tidy\ndescription: Tidy the module.\n---\nRun go mod tidy.\n")
	srv := llmtest.New(t, []llmtest.Turn{text("Hello, Ada."), text("Tidied.")})
	m := agentManifest(srv.URL, t.TempDir(), "  - name: commands\n  - name: skills\n")
	r := runAgent(t, repo, m, "/greet Ada\n/tidy\n/exit\n", "chat")
	if r.code != 0 || !strings.Contains(r.stdout, "Hello, Ada.") || !strings.Contains(r.stdout, "Tidied.") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2\nstderr: %s", len(reqs), r.stderr)
	}
	first, _ := reqs[0].Wire()
	if got := first.Messages[1].Text(); got != "Say hello to Ada.\n" {
		t.Errorf("the first user message = %q", got)
	}
	if second, _ := reqs[1].Wire(); !strings.Contains(second.Messages[len(second.Messages)-1].Text()+second.Messages[len(second.Messages)-2].Text(), "Run go mod tidy.") {
		t.Errorf("the skill's prompt was not sent:\n%s", reqs[1].Body)
	}
}

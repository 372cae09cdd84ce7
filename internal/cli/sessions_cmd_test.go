package cli_test

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// sessions show prints the conversation (prompt, tool call, tool result,
// answer) as text and every stored record with --json; --fork continues
// from a copy (the model sees the source's history, the source is left
// as it was, the copy names its parent); rm deletes; unknown ids exit 2.
func TestSessionsShowForkRm(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "alpha\n"})
	srv := llmtest.New(t, []llmtest.Turn{
		toolCall("c1", "read", `{"file_path":"a.txt"}`),
		text("It says alpha."),
		text("Forked answer."),
	})
	state := t.TempDir()
	m := agentManifest(srv.URL, state, "")
	if r := runAgent(t, repo, m, "", "run", "what does a.txt say?"); r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	list, _ := agent.ListSessions(state)
	if len(list) != 1 {
		t.Fatalf("sessions %+v", list)
	}
	id := list[0].ID
	before, _ := os.ReadFile(list[0].Path)

	show := runAgent(t, repo, m, "", "sessions", "show", id)
	for _, want := range []string{"session " + id, "cwd:     " + repo, "── user (turn 1) ──\nwhat does a.txt say?",
		"→ read {\"file_path\":\"a.txt\"} (c1)", "── tool result: read (c1) ──", "alpha", "It says alpha."} {
		if show.code != 0 || !strings.Contains(show.stdout, want) {
			t.Fatalf("show lacks %q (exit %d):\n%s\n%s", want, show.code, show.stdout, show.stderr)
		}
	}
	js := runAgent(t, repo, m, "", "sessions", "show", "--json", id)
	var doc struct {
		Session agent.SessionInfo
		Records []map[string]any
	}
	if err := json.Unmarshal([]byte(js.stdout), &doc); err != nil || doc.Session.ID != id || doc.Session.Turns != 1 ||
		len(doc.Records) != strings.Count(string(before), "\n") || doc.Records[0]["type"] != "session" {
		t.Fatalf("show --json: %v %+v\n%s", err, doc.Session, js.stdout)
	}

	fork := runAgent(t, repo, m, "", "run", "--fork", id, "and now?")
	if fork.code != 0 || fork.stdout != "Forked answer.\n" {
		t.Fatalf("fork: %d %q %s", fork.code, fork.stdout, fork.stderr)
	}
	w, _ := srv.Requests()[2].Wire()
	if h := w.History(); !strings.Contains(h, "what does a.txt say?") || !strings.Contains(h, "It says alpha.") || !strings.Contains(h, "and now?") {
		t.Fatalf("the fork's request lacks the source history:\n%s", h)
	}
	if after, _ := os.ReadFile(list[0].Path); string(after) != string(before) {
		t.Fatal("the fork changed its source")
	}
	list, _ = agent.ListSessions(state)
	if len(list) != 2 || list[0].Parent != id || list[0].Origin != "fork" || list[0].Turns != 2 || list[0].Title != "what does a.txt say?" {
		t.Fatalf("after fork: %+v", list)
	}
	if r := runAgent(t, repo, m, "", "run", "--fork", id, "--session", id, "x"); r.code != 2 || !strings.Contains(r.stderr, "mutually exclusive") {
		t.Fatalf("--fork with --session: %d %s", r.code, r.stderr)
	}

	if r := runAgent(t, repo, m, "", "sessions", "rm", id); r.code != 0 || !strings.Contains(r.stderr, "removed session "+id) {
		t.Fatalf("rm: %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(list[1].Path); !os.IsNotExist(err) {
		t.Fatalf("log still there: %v", err)
	}
	for _, args := range [][]string{{"sessions", "rm", id}, {"sessions", "show", id}, {"run", "--fork", id, "x"}} {
		if r := runAgent(t, repo, m, "", args...); r.code != 2 || !strings.Contains(r.stderr, "session not found") {
			t.Fatalf("%v: %d %s", args, r.code, r.stderr)
		}
	}
}

// sessions follow (a process) prints the stored records, then the records
// a later turn of another process appends, and exits 0 on SIGINT.
func TestSessionsFollow(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "alpha\n"})
	srv := llmtest.New(t, []llmtest.Turn{text("first answer"), text("second answer")})
	state := t.TempDir()
	m := agentManifest(srv.URL, state, "")
	if r := runAgent(t, repo, m, "", "run", "one"); r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	list, _ := agent.ListSessions(state)
	id := list[0].ID
	cmd := processCommand(t, repo, m, baseEnv(), "sessions", "follow", "--json", id)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := bufio.NewScanner(out)
	lines.Buffer(nil, 1<<20)
	readUntil := func(want string) {
		t.Helper()
		for lines.Scan() {
			if strings.Contains(lines.Text(), want) {
				return
			}
		}
		t.Fatalf("follow ended before %q", want)
	}
	readUntil(`"first answer"`)
	if r := runAgent(t, repo, m, "", "run", "--session", id, "two"); r.code != 0 {
		t.Fatalf("second run: %d %s", r.code, r.stderr)
	}
	readUntil(`"second answer"`)
	_ = cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("follow after SIGINT: %v", err)
	}
}

package cli_test

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// The todo list across processes: a run writes it (stream-json carries a
// "state" event with the list), `run --continue` restores it from the log
// (the model's next todo_write is not needed for chat to show it), and
// chat's /todos prints it after `--continue`.
func TestTodoReplayAfterContinue(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	state := t.TempDir()
	list := `{"todos":[{"content":"Read a.txt","status":"completed"},{"content":"Edit a.txt","status":"in_progress","activeForm":"Editing a.txt"},{"content":"Run tests","status":"pending"}]}`
	srv := llmtest.New(t, []llmtest.Turn{toolCall("c1", "todo_write", list), text("planned"), text("still here")})
	m := agentManifest(srv.URL, state, "  - name: commands\n  - name: tool-todo\n")
	r := runAgent(t, repo, m, "", "run", "-o", "stream-json", "plan it")
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	var sawState bool
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var e struct {
			Type  string            `json:"type"`
			Key   string            `json:"key"`
			State []json.RawMessage `json:"state"`
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type == "state" && e.Key == "todos" && len(e.State) == 3 {
			sawState = true
		}
	}
	if !sawState {
		t.Fatalf("no state event with the list:\n%s", r.stdout)
	}
	c := runAgent(t, repo, m, "/todos\nhello\n/todos\n/exit\n", "chat", "--continue")
	if c.code != 0 {
		t.Fatal(c.stderr)
	}
	want := "[x] Read a.txt\n[>] Edit a.txt (Editing a.txt)\n[ ] Run tests\n"
	if strings.Count(c.stdout, want) != 2 {
		t.Fatalf("/todos after --continue:\n%s", c.stdout)
	}
}

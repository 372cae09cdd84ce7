package tooltodo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/dshgo/harness/harnesstest"
	tooltodo "github.com/dshgo/harness/plugins/tool-todo"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func manifest(url, state string) string {
	return fmt.Sprintf(`plugins:
  - name: systemprompt
  - name: tools
  - name: prompt-tools
  - name: tool-todo
  - name: llm
  - name: llm-openai
    config:
      provider: test
      baseURL: %s
      apiKey: sk-test
      models: [{name: m1, contextWindow: 100000}]
  - name: sessions-jsonl
    config: {stateDir: %s}
  - name: agent
    config: {model: test}
`, url, state)
}

func todos(items ...string) string {
	var list []map[string]string
	for _, it := range items {
		content, status, _ := strings.Cut(it, ":")
		list = append(list, map[string]string{"content": content, "status": status, "activeForm": content + "ing"})
	}
	b, _ := json.Marshal(map[string]any{"todos": list})
	return string(b)
}

// The model writes a list, breaks the one-in-progress rule (an error result
// saying why; the list is unchanged), then completes an item. Each change
// is a state event and a log record; a resumed session starts with the
// last list, and the tool's schema and description reach the model.
func TestTodoWriteJournaledAndRestored(t *testing.T) {
	srv := llmtest.New(t, []llmtest.Turn{
		llmtest.Calls(llmtest.Call{ID: "c1", Name: "todo_write", Args: todos("Read the code:in_progress", "Fix the bug:pending")}),
		llmtest.Calls(llmtest.Call{ID: "c2", Name: "todo_write", Args: todos("Read the code:in_progress", "Fix the bug:in_progress")}),
		llmtest.Calls(llmtest.Call{ID: "c3", Name: "todo_write", Args: todos("Read the code:completed", "Fix the bug:in_progress")}),
		llmtest.Reply("working on it"),
		llmtest.Reply("resumed"),
	})
	state := t.TempDir()
	h := harnesstest.Start(t, manifest(srv.URL, state))
	svc := harnesstest.Service(t, h, agent.Key)
	var events []agent.Event
	var cards []string
	ss, err := svc.Open(context.Background(), agent.Options{Observer: func(e agent.Event) {
		if e.Type == agent.EventState {
			events = append(events, e)
		}
		if e.Type == agent.EventToolResult {
			p := e.ToolResult.Presentation
			line := p.Summary()
			if p.Status == tools.StatusFailed {
				line = p.Reason()
			}
			cards = append(cards, fmt.Sprintf("%s %s %s: %s|%s", p.Kind, p.Status, p.Title, line, p.Content[0].Content.Text))
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ss.Run(context.Background(), "fix it"); err != nil {
		t.Fatal(err)
	}
	id := ss.ID()
	if err := ss.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || events[0].Key != tooltodo.StateKey {
		t.Fatalf("state events: %+v", events)
	}
	// Each call presents the list it writes, titled with the item in progress.
	wantCards := []string{
		"think completed Read the codeing: 0 of 2 done|[>] Read the code (Read the codeing)\n[ ] Fix the bug\n",
		"think failed Read the codeing: " + `todos[0] ("Read the code") and todos[1] ("Fix the bug") are both in_progress; at most one item may be in_progress: finish or reset one first|[>] Read the code (Read the codeing)` + "\n[>] Fix the bug (Fix the buging)\n",
		"think completed Fix the buging: 1 of 2 done|[x] Read the code\n[>] Fix the bug (Fix the buging)\n",
	}
	if strings.Join(cards, "\n\n") != strings.Join(wantCards, "\n\n") {
		t.Fatalf("cards:\n%s\nwant:\n%s", strings.Join(cards, "\n\n"), strings.Join(wantCards, "\n\n"))
	}
	w2, err := srv.Requests()[2].Wire()
	if err != nil {
		t.Fatal(err)
	}
	rejected := w2.Messages[len(w2.Messages)-1].Text()
	if !strings.Contains(rejected, "Error: ") || !strings.Contains(rejected, "at most one item may be in_progress") ||
		!strings.Contains(rejected, `todos[0] ("Read the code") and todos[1] ("Fix the bug") are both in_progress`) {
		t.Fatalf("the rule violation result: %q", rejected)
	}
	w0, _ := srv.Requests()[0].Wire()
	var described bool
	for _, tool := range w0.Tools {
		described = described || tool.Function.Name == "todo_write" && strings.Contains(tool.Function.Description, "in_progress")
	}
	if !described {
		t.Fatal("todo_write is not offered to the model with its description")
	}

	// Resume: the last list is the session's state.
	ss2, err := svc.Open(context.Background(), agent.Options{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	defer ss2.Close(context.Background())
	items, err := tooltodo.Parse(ss2.State(tooltodo.StateKey))
	if err != nil {
		t.Fatal(err)
	}
	want := "[x] Read the code\n[>] Fix the bug (Fix the buging)\n"
	if got := tooltodo.Format(items); got != want {
		t.Fatalf("restored list:\n%s\nwant:\n%s", got, want)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		items []tooltodo.Item
		want  string
	}{
		{nil, ""},
		{[]tooltodo.Item{{Content: "a", Status: "pending"}, {Content: "b", Status: "in_progress"}, {Content: "c", Status: "completed"}}, ""},
		{[]tooltodo.Item{{Content: " ", Status: "pending"}}, "todos[0]: content is empty"},
		{[]tooltodo.Item{{Content: "a", Status: "done"}}, `todos[0]: status "done": want pending, in_progress or completed`},
		{[]tooltodo.Item{{Content: "a", Status: "in_progress"}, {Content: "b", Status: "in_progress"}}, "at most one item may be in_progress"},
		{make([]tooltodo.Item, tooltodo.MaxItems+1), "at most 100 are allowed"},
	} {
		err := tooltodo.Validate(tc.items)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%v) = %v, want %q", tc.items, err, tc.want)
		}
	}
}

// Package tooltodo is the tool-todo plugin: the todo_write tool, with
// which the model keeps a visible plan for a multi-step task (dsh's todo
// subsystem, Claude Code's TodoWrite).
//
// Each call replaces the session's whole list. An item is {content,
// status: pending | in_progress | completed, activeForm?}; at most one item
// may be in_progress, and a call that breaks a rule gets an error result
// saying which item and why (the list is then unchanged). The list is
// session state (package sessionstate, key [StateKey]): the agent journals
// every change as a "state" record of the session log, emits it as a
// "state" event (stream-json), and a resumed session (--continue,
// --session) starts with its last list. `harness chat` shows it with /todos.
package tooltodo

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/commands"
	"github.com/dshgo/harness/services/sessions/sessionstate"
	"github.com/dshgo/harness/services/tools"
)

// StateKey is the session state key of the todo list.
const StateKey = "todos"

// ToolName is the tool's name.
const ToolName = "todo_write"

// Statuses of an item.
const (
	StatusPending    = "pending"
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
)

// Item is one entry of the list.
type Item struct {
	// Content says what is to be done, imperative ("Run the tests").
	Content string `json:"content" jsonschema:"minLength=1,description=What to do, in the imperative (Run the tests)"`
	// Status is pending, in_progress or completed.
	Status string `json:"status" jsonschema:"enum=pending,enum=in_progress,enum=completed"`
	// ActiveForm is the present-continuous form shown while the item is in
	// progress ("Running the tests"); optional.
	ActiveForm string `json:"activeForm,omitempty" jsonschema:"description=Present continuous form shown while in progress (Running the tests)"`
}

// Args are todo_write's arguments: the whole new list.
type Args struct {
	Todos []Item `json:"todos" jsonschema:"description=The complete updated todo list (replaces the previous one)"`
}

// MaxItems bounds the list.
const MaxItems = 100

// Description teaches the model when to use the tool.
const Description = `Create or update your todo list for the current task; each call replaces the whole list.
Use it for work with three or more distinct steps, or when the user gives several tasks: write the steps down first, mark exactly one item in_progress before you start it, and mark it completed as soon as it is done (not in batches). Add items you discover along the way; remove ones that no longer apply. Skip it for a single simple step or a purely conversational request.
Items: {content: imperative ("Run the tests"), status: pending | in_progress | completed, activeForm?: "Running the tests"}. At most one item may be in_progress.`

// Config is empty.
type Config struct{}

// Plugin registers todo_write. It waits for the tool registry.
var Plugin = core.Define("tool-todo", apply,
	core.WithInject(tools.Key.Name()),
	core.WithDescription("todo_write: the model's task list, kept per session and restored on resume"))

func apply(c *core.Context, _ Config) error {
	if err := tools.Register(c, Tool()); err != nil {
		return err
	}
	// /todos in the front ends that run registered commands, when the
	// commands registry is up (its row comes earlier in harness.yml).
	if reg, ok := core.Lookup(c, commands.Key); ok && reg != nil {
		return reg.Register(c, commands.Command{Name: "todos", Summary: "the model's todo list (tool-todo)", Run: todosCommand})
	}
	return nil
}

// stateful is what /todos needs of the front end's session (an
// *agent.Session has it).
type stateful interface {
	State(key string) json.RawMessage
}

// todosCommand is /todos: the session's list, as todo_write's result
// shows it.
func todosCommand(_ context.Context, inv commands.Invocation) (commands.Reply, error) {
	ss, ok := inv.Session.(stateful)
	if !ok {
		return commands.Reply{Text: "no session"}, nil
	}
	items, err := Parse(ss.State(StateKey))
	if err != nil {
		return commands.Reply{}, fmt.Errorf("the stored todo list is unreadable: %w", err)
	}
	if len(items) == 0 {
		return commands.Reply{Text: "no todos"}, nil
	}
	return commands.Reply{Text: "```\n" + Format(items) + "```"}, nil
}

// Tool defines todo_write.
func Tool() *tools.Tool {
	return tools.Define(ToolName, Description, func(ctx context.Context, _ *tools.Execution, a Args) (string, error) {
		if err := Validate(a.Todos); err != nil {
			return "", &tools.Error{Name: "TodoError", Code: "TODO_INVALID", Message: err.Error()}
		}
		st, ok := sessionstate.From(ctx)
		if !ok {
			return "", &tools.Error{Name: "TodoError", Code: "TODO_NO_SESSION", Message: "todo_write works only inside an agent session"}
		}
		list := a.Todos
		if list == nil {
			list = []Item{}
		}
		b, err := json.Marshal(list)
		if err != nil {
			return "", err
		}
		if err := st.SetState(StateKey, b); err != nil {
			return "", err
		}
		return "Todo list updated.\n" + Format(list), nil
	}, tools.WithInternal(), tools.WithPresent(Present))
}

// Present is todo_write's presentation: kind think, titled with the item
// in progress (its activeForm when given) or the list's size; the list as
// [Format] writes it as text, and "N of M done" as the summary. The list
// comes from the call's arguments, so a front end shows it from the call
// alone, before the result and when a session is replayed.
func Present(in tools.PresentInput[Args, string]) tools.Presentation {
	p := tools.Presentation{Kind: tools.KindThink, Title: title(in.Args.Todos)}
	p.Content = []tools.ToolCallContent{tools.TextContent(Format(in.Args.Todos))}
	if in.Succeeded() {
		p.SetPlan(Plan(in.Args.Todos))
		done := 0
		for _, it := range in.Args.Todos {
			if it.Status == StatusCompleted {
				done++
			}
		}
		p.Summarize(fmt.Sprintf("%d of %d done", done, len(in.Args.Todos)))
	}
	return p
}

// title is the item in progress, else "N items".
func title(items []Item) string {
	for _, it := range items {
		if it.Status == StatusInProgress {
			if it.ActiveForm != "" {
				return it.ActiveForm
			}
			return it.Content
		}
	}
	if len(items) == 1 {
		return "1 item"
	}
	return fmt.Sprintf("%d items", len(items))
}

// Validate checks the rules: non-empty content, a known status, at most
// one in_progress item, at most MaxItems items.
func Validate(items []Item) error {
	if len(items) > MaxItems {
		return fmt.Errorf("the list has %d items; at most %d are allowed", len(items), MaxItems)
	}
	inProgress := -1
	for i, it := range items {
		if strings.TrimSpace(it.Content) == "" {
			return fmt.Errorf("todos[%d]: content is empty", i)
		}
		switch it.Status {
		case StatusPending, StatusCompleted:
		case StatusInProgress:
			if inProgress >= 0 {
				return fmt.Errorf("todos[%d] (%q) and todos[%d] (%q) are both in_progress; at most one item may be in_progress: finish or reset one first",
					inProgress, items[inProgress].Content, i, it.Content)
			}
			inProgress = i
		default:
			return fmt.Errorf("todos[%d]: status %q: want pending, in_progress or completed", i, it.Status)
		}
	}
	return nil
}

// Parse decodes a stored list (nil or empty: no list).
func Parse(raw json.RawMessage) ([]Item, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var items []Item
	err := json.Unmarshal(raw, &items)
	return items, err
}

// Format renders the list one item per line (tools.FormatPlan): "[x]
// done", "[>] current (activeForm)", "[ ] pending"; "(no todos)" when empty.
func Format(items []Item) string {
	if len(items) == 0 {
		return "(no todos)\n"
	}
	return tools.FormatPlan(Plan(items))
}

// Plan is the list as the agent's plan (what front ends show).
func Plan(items []Item) []tools.PlanEntry {
	plan := make([]tools.PlanEntry, len(items))
	for i, it := range items {
		plan[i] = tools.PlanEntry{Content: it.Content, Status: it.Status, ActiveForm: it.ActiveForm}
	}
	return plan
}

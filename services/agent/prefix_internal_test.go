package agent

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/systemprompt"
)

// A tool list that is the same as the recorded one but for key order and
// whitespace is the recorded one; a change keeps the recorded order,
// replaces the changed schema in place, drops a tool no longer offered and
// adds new ones at the end.
func TestMergeToolsKeepsTheRecordedOrderAndAppends(t *testing.T) {
	a := llm.ToolSchema{Name: "a", Description: "A.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}
	b := llm.ToolSchema{Name: "b", Description: "B.", Parameters: json.RawMessage(`{"properties":{"x":{"type":"string"}},"type":"object"}`)}
	c := llm.ToolSchema{Name: "c", Description: "C."}
	reordered := b
	reordered.Parameters = json.RawMessage(`{ "type": "object", "properties": {"x": {"type": "string"}} }`)
	if got, changed := mergeTools([]llm.ToolSchema{a, b}, []llm.ToolSchema{reordered, a}); changed || !reflect.DeepEqual(got, []llm.ToolSchema{a, b}) {
		t.Fatalf("same tools, other order and key order: changed %v, %v", changed, got)
	}
	b2 := b
	b2.Description = "B, changed."
	got, changed := mergeTools([]llm.ToolSchema{a, b, c}, []llm.ToolSchema{{Name: "d"}, b2, c})
	if want := []llm.ToolSchema{b2, c, {Name: "d"}}; !changed || !reflect.DeepEqual(got, want) {
		t.Fatalf("changed %v, got %v, want %v", changed, got, want)
	}
}

// Changed, new and removed sections are announced in one message; the same
// sections announce nothing.
func TestSectionUpdateNamesWhatChanged(t *testing.T) {
	was := []systemprompt.RenderedSection{{Name: "id", Text: "I am."}, {Name: "env", Text: "git: clean"}, {Name: "old", Text: "gone"}}
	if _, changed := sectionUpdate(was, was); changed {
		t.Fatal("the same sections changed")
	}
	now := []systemprompt.RenderedSection{{Name: "id", Text: "I am."}, {Name: "env", Text: "git: 1 changed"}, {Name: "new", Text: "hello"}}
	got, changed := sectionUpdate(was, now)
	want := "[Parts of the system prompt changed since the session started. The current text of each changed part follows; it replaces the earlier one.]\n\ngit: 1 changed\n\nhello\n\n[No longer in effect: the parts named old.]"
	if !changed || got != want {
		t.Fatalf("got %q", got)
	}
}

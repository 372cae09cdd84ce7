package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dshgo/harness/services/tools"
)

type greetArgs struct {
	Who string `json:"who"`
}

// A tool's presenter fills what it knows; Present adds the id, the
// status, the reason of a failure and the summary; a tool without one (or
// arguments the presenter cannot decode, or a presenter that panics) gets
// the generic presentation: kind other, the name and the first string
// argument as its title, the result's text as its content.
func TestPresent(t *testing.T) {
	t.Parallel()
	greet := tools.Define("greet", "d", func(context.Context, *tools.Execution, greetArgs) (string, error) { return "", nil },
		tools.WithPresent(func(in tools.PresentInput[greetArgs, string]) tools.Presentation {
			if in.Args.Who == "panic" {
				panic("boom")
			}
			p := tools.Presentation{Kind: tools.KindEdit, Title: in.Args.Who, Locations: []tools.Location{{Path: "/w/" + in.Args.Who, Line: 3}}}
			if in.Succeeded() {
				old := "a\n"
				p.Content = []tools.ToolCallContent{tools.DiffContent("/w/"+in.Args.Who, &old, in.Out)}
				if in.Out == "bad\n" {
					p.Fail("the greeting was bad")
				}
			}
			return p
		}))
	pending := tools.Present(greet, tools.PresentCall{ID: "c1", Name: "greet", Arguments: `{"who":"ann"}`})
	if pending.ToolCallID != "c1" || pending.Status != tools.StatusPending || pending.Kind != tools.KindEdit || pending.Title != "ann" ||
		string(pending.RawInput) != `{"who":"ann"}` || tools.Label("greet", &pending) != "greet ann" {
		t.Errorf("pending: %+v", pending)
	}
	done := tools.Present(greet, tools.PresentCall{ID: "c1", Name: "greet", Arguments: `{"who":"ann"}`, Outcome: &tools.Outcome{Value: "b\n", Content: []tools.Content{tools.Text("ok\nok")}}})
	b, _ := json.Marshal(done)
	if want := `{"toolCallId":"c1","title":"ann","kind":"edit","status":"completed","content":[{"type":"diff","path":"/w/ann","oldText":"a\n","newText":"b\n"}],"locations":[{"path":"/w/ann","line":3}],"_meta":{"summary":"2 lines"}}`; string(b) != want {
		t.Errorf("completed:\n%s\nwant\n%s", b, want)
	}
	bad := tools.Present(greet, tools.PresentCall{ID: "c1", Name: "greet", Arguments: `{"who":"ann"}`, Outcome: &tools.Outcome{Value: "bad\n"}})
	if bad.Status != tools.StatusFailed || bad.Reason() != "the greeting was bad" {
		t.Errorf("presenter's failure: %+v", bad)
	}
	failed := tools.Present(greet, tools.PresentCall{ID: "c1", Name: "greet", Arguments: `{"who":"ann"}`, Outcome: tools.Failure("no such person\nat all", nil)})
	if failed.Status != tools.StatusFailed || failed.Reason() != "no such person …" || failed.Content != nil {
		t.Errorf("error outcome: %+v", failed)
	}
	for _, args := range []string{`{"who":"panic"}`, `{"who":3}`} {
		g := tools.Present(greet, tools.PresentCall{ID: "c2", Name: "greet", Arguments: args})
		if g.Kind != tools.KindOther || g.Status != tools.StatusPending {
			t.Errorf("%s: %+v", args, g)
		}
	}
	generic := tools.Present(nil, tools.PresentCall{ID: "c3", Name: "lookup", Arguments: `{"n":1,"query":"the\nweather","x":"y"}`,
		Outcome: &tools.Outcome{Content: []tools.Content{tools.Text("sunny")}}})
	if generic.Title != "lookup the …" || generic.Kind != tools.KindOther || generic.Status != tools.StatusCompleted ||
		len(generic.Content) != 1 || generic.Content[0].Content.Text != "sunny" || tools.Label("lookup", &generic) != "lookup the …" {
		t.Errorf("generic: %+v", generic)
	}
	if g := tools.Present(nil, tools.PresentCall{ID: "c4", Name: "now", Arguments: `{}`}); g.Title != "now" {
		t.Errorf("no arguments: title %q", g.Title)
	}
}

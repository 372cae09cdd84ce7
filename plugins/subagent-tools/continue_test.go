package subagenttools_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/subagent"
)

// A continuable child takes a second message, and after a restart (a new
// root on the same state directory) is resumed from its log by its parent.
func TestContinuableChildResumesFromItsLogAfterRestart(t *testing.T) {
	r := newRouter(map[string][]llmtest.Turn{
		"":   {llmtest.Calls(call("t1", "task", `{"description":"memo","prompt":"#A remember 7","continuable":true}`)), llmtest.Reply("started")},
		"#A": {llmtest.Reply("noted 7")},
	})
	f := newFixture(t, nil, fixtureOpts{router: r})
	ss, err := f.svc.Open(context.Background(), agent.Options{Model: "test/m1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ss.Run(context.Background(), "start a memo agent"); err != nil {
		t.Fatal(err)
	}
	kid := f.children(ss.ID())[0]
	// A second message in the same process.
	r.add("", llmtest.Calls(call("m1", "send_message", `{"agent_id":"`+kid+`","message":"and 8"}`)), llmtest.Reply("sent"))
	r.add("#A", llmtest.Reply("noted 7 and 8"))
	if _, err := ss.Run(context.Background(), "tell it 8"); err != nil {
		t.Fatal(err)
	}
	if got := lastToolResult(f.records(ss.ID())); got != "noted 7 and 8" {
		t.Fatalf("send_message result = %q", got)
	}
	// Lineage: an unrelated session may not message, interrupt or close it.
	other := subagent.Parent{SessionID: "someone-else"}
	if _, err := f.sub.Send(context.Background(), other, kid, "hi"); subagent.CodeOf(err) != subagent.CodeNotDirectChild {
		t.Fatalf("send from a stranger: %v", err)
	}
	if err := f.sub.Interrupt("someone-else", kid); subagent.CodeOf(err) != subagent.CodeNotDirectChild {
		t.Fatalf("interrupt from a stranger: %v", err)
	}
	if _, err := f.sub.Send(context.Background(), subagent.Parent{SessionID: ss.ID()}, "20990101T000000-deadbeef", "hi"); subagent.CodeOf(err) != subagent.CodeUnknownAgent {
		t.Fatalf("send to an unknown agent: %v", err)
	}
	// Restart.
	if err := ss.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := f.root.Dispose(context.Background()); err != nil {
		t.Fatal(err)
	}
	g := newFixture(t, nil, fixtureOpts{router: r, state: f.state})
	ss2 := g.open(agent.Options{ID: ss.ID()})
	if list, _ := g.sub.Children(context.Background(), ss2.ID()); len(list) != 1 || list[0].ID != kid || list[0].Live || !list[0].Continuable {
		t.Fatalf("stored children after restart = %+v", list)
	}
	r.add("", llmtest.Calls(call("m2", "send_message", `{"agent_id":"`+kid+`","message":"sum?"}`)), llmtest.Reply("15"))
	r.add("#A", llmtest.Reply("15"))
	if _, err := ss2.Run(context.Background(), "ask for the sum"); err != nil {
		t.Fatal(err)
	}
	// The resumed child sent its whole history.
	var hist string
	for _, req := range g.srv.Requests() {
		if w, _ := req.Wire(); conversation(w) == "#A" {
			hist = w.History()
		}
	}
	if !strings.Contains(hist, "user:#A remember 7|assistant:noted 7|user:and 8|assistant:noted 7 and 8|user:sum?") {
		t.Fatalf("resumed child history = %s", hist)
	}
	if got := lastToolResult(g.records(ss2.ID())); got != "15" {
		t.Fatalf("result after restart = %q", got)
	}
}

func lastToolResult(recs []agent.Record) string {
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Type == agent.RecordToolResult && recs[i].Message != nil {
			return recs[i].Message.Content
		}
	}
	return ""
}

// With maxDepth 2 a child may delegate once more; the grandchild gets no
// delegation tools, and its events reach the top-level observer at depth 2.
func TestDepthLimitHidesDelegationToolsAndRelaysGrandchildEvents(t *testing.T) {
	f := newFixture(t, map[string][]llmtest.Turn{
		"":   {llmtest.Calls(call("t1", "task", `{"description":"outer","prompt":"#A delegate again"}`)), llmtest.Reply("done")},
		"#A": {llmtest.Calls(call("t1", "task", `{"description":"inner","prompt":"#B leaf work"}`)), llmtest.Reply("inner done")},
		"#B": {llmtest.Reply("leaf")},
	}, fixtureOpts{maxDepth: 2})
	var evs events
	ss := f.open(agent.Options{Model: "test/m1", Observer: evs.add})
	if _, err := ss.Run(context.Background(), "go deep"); err != nil {
		t.Fatal(err)
	}
	toolsOf := map[string][]string{}
	for _, req := range f.srv.Requests() {
		w, _ := req.Wire()
		var names []string
		for _, tl := range w.Tools {
			names = append(names, tl.Function.Name)
		}
		toolsOf[conversation(w)] = names
	}
	if !slices.Contains(toolsOf[""], "task") || !slices.Contains(toolsOf["#A"], "task") || slices.Contains(toolsOf["#B"], "task") || slices.Contains(toolsOf["#B"], "send_message") {
		t.Fatalf("tools per depth = %v", toolsOf)
	}
	depths := map[int]bool{}
	for _, e := range evs.list() {
		depths[e.Depth] = true
	}
	if !depths[0] || !depths[1] || !depths[2] {
		t.Fatalf("event depths = %v", depths)
	}
}

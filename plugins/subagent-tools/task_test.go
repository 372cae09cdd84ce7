package subagenttools_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/tools"
)

func TestTwoTasksInOneStepOverlapAndRollUpUsage(t *testing.T) {
	f := newFixture(t, map[string][]llmtest.Turn{
		"": {
			callsWithUsage(usage(100, 10),
				call("t1", "task", `{"description":"part a","prompt":"#A do a"}`),
				call("t2", "task", `{"description":"part b","prompt":"#B do b"}`)),
			replyWithUsage("both done", usage(200, 5)),
		},
		"#A": {callsWithUsage(usage(10, 1), call("s1", "sleep", `{"ms":300}`)), replyWithUsage("answer A", usage(20, 2))},
		"#B": {callsWithUsage(usage(10, 1), call("s1", "sleep", `{"ms":300}`)), replyWithUsage("answer B", usage(20, 2))},
	}, fixtureOpts{})
	var evs events
	ss := f.open(agent.Options{Model: "test/m1", Observer: evs.add})
	res, err := ss.Run(context.Background(), "split the work")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "both done" || res.Usage.PromptTokens != 360 || res.Usage.CompletionTokens != 21 ||
		res.SubagentUsage == nil || res.SubagentUsage.PromptTokens != 60 || res.SubagentUsage.CompletionTokens != 6 {
		t.Fatalf("result = %+v (subagents %+v)", res, res.SubagentUsage)
	}
	if ss.Usage().PromptTokens != 300 {
		t.Fatalf("the parent's own total counts only its own calls: %+v", ss.Usage())
	}
	// The children's sleep calls overlapped in time.
	calls := f.probe.calls
	if len(calls) != 2 || calls[0].session == calls[1].session {
		t.Fatalf("sleep calls = %+v", calls)
	}
	a, b := calls[0], calls[1]
	if !(a.start.Before(b.end) && b.start.Before(a.end)) {
		t.Fatalf("children did not overlap: %v–%v and %v–%v", a.start, a.end, b.start, b.end)
	}
	// The parent got each answer as its tool result, with the child's id in meta.
	var results []*agent.ToolResultEvent
	children := map[string]bool{}
	for _, e := range evs.list() {
		if e.SessionID == ss.ID() && e.Type == agent.EventToolResult {
			results = append(results, e.ToolResult)
		}
		if e.SessionID != ss.ID() {
			if e.Depth != 1 || e.ParentID != ss.ID() {
				t.Fatalf("relayed child event without depth/parent: %+v", e)
			}
			children[e.SessionID] = true
		}
	}
	if len(results) != 2 || results[0].Content != "answer A" || results[1].Content != "answer B" {
		t.Fatalf("results = %+v", results)
	}
	var meta struct{ SessionID, Status string }
	if err := json.Unmarshal(results[0].Meta, &meta); err != nil || !children[meta.SessionID] || meta.Status != "completed" {
		t.Fatalf("meta = %s (%v); children %v", results[0].Meta, err, children)
	}
	// A task presents itself by its description: the prompt while it
	// runs, then the answer, and the agent that gave it.
	for _, e := range evs.list() {
		if e.SessionID == ss.ID() && e.Type == agent.EventToolCall && e.ToolCall.ID == "t1" {
			if p := e.ToolCall.Presentation; p.Title != "part a" || p.Kind != tools.KindThink || p.Content[0].Content.Text != "#A do a" {
				t.Errorf("pending task: %+v", p)
			}
		}
	}
	p := results[0].Presentation
	if p.Title != "part a" || p.Status != tools.StatusCompleted || p.Content[0].Content.Text != "answer A" ||
		p.Summary() != "agent "+meta.SessionID+" completed, 33 tokens" {
		t.Errorf("task result: %+v %+v", p, p.Meta)
	}
	// Each child is stored with its parent in the header and listed by it.
	page, err := f.svc.Sessions().List(context.Background(), sessions.Query{Parent: ss.ID()})
	if err != nil || len(page.Sessions) != 2 {
		t.Fatalf("children listed = %+v, %v", page.Sessions, err)
	}
	for _, info := range page.Sessions {
		if info.Origin != "subagent" || !children[info.ID] {
			t.Fatalf("child %+v", info)
		}
		recs := f.records(info.ID)
		if recs[0].Parent != ss.ID() || recs[0].Origin != "subagent" {
			t.Fatalf("header = %+v", recs[0])
		}
	}
	// The child saw the deployment persona and the parent's tools minus
	// delegation (maxDepth 1).
	for _, r := range f.srv.Requests() {
		w, _ := r.Wire()
		if conversation(w) == "" {
			continue
		}
		var names []string
		for _, tl := range w.Tools {
			names = append(names, tl.Function.Name)
		}
		slices.Sort(names)
		if got := strings.Join(names, ","); got != "read_file,sleep" {
			t.Fatalf("child tools = %s", got)
		}
	}
}

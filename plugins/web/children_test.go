package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// subagentRows are the manifest rows of in-process subagents and the task
// tool, reading agent definitions from state/agents only (not from
// $XDG_CONFIG_HOME or the working directory, which the tests share).
func subagentRows(state string) string {
	return "  - name: subagents\n  - name: subagent-inprocess\n  - name: subagent-tools\n    config: {dirs: [" + state + "/agents]}\n"
}

const childPrompt = "count the files in the repository"

// delegation scripts a parent that calls task, a child that answers, and
// the parent's final answer. The child's model call waits for gate to
// close (so a test can watch the child while it runs).
func delegation(t *testing.T, gate <-chan struct{}) *llmtest.Server {
	args, _ := json.Marshal(map[string]any{"description": "count files", "prompt": childPrompt})
	return llmtest.New(t, []llmtest.Turn{
		llmtest.Calls(llmtest.Call{ID: "call-task", Name: "task", Args: string(args)}),
		llmtest.Reply("There are 3 files."),
		llmtest.Reply("The child counted 3 files."),
	}, llmtest.WithCheck(func(_ llmtest.Request, w llmtest.WireRequest) *llmtest.Turn {
		for _, m := range w.Messages {
			if m.Role == "user" && strings.Contains(m.Text(), childPrompt) {
				select {
				case <-gate:
				case <-time.After(patience):
				}
				break
			}
		}
		return nil
	}))
}

// TestSubagentChildCardsAndReadOnlyChildView: a parent that calls task
// shows the child as a card (running, then completed with its usage and
// answer); the child's session streams live, read-only, while it runs, is
// listed under its parent, refuses prompts, and replays from its log; the
// parent's replay shows the card again.
func TestSubagentChildCardsAndReadOnlyChildView(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	gate := make(chan struct{})
	e := startModel(t, delegation(t, gate), func(modelURL, state string) string {
		return testManifest(modelURL, state, "bypass", "    config: {idleClose: 1s}\n"+subagentRows(state))
	})
	ws := e.workspace(repo)
	p := e.newSession(ws)
	ps := e.stream(ws, p, "")
	e.must(202, "POST", "/api/workspaces/"+ws.ID+"/sessions/"+p+"/prompt", map[string]string{"text": "delegate the count"}, nil)
	card := ps.until("the child's card", isType("subagent"))
	if card.Subagent.State != "running" || card.Subagent.Parent != p || card.Subagent.Description != "count files" {
		t.Fatalf("card %+v", card.Subagent)
	}
	child := card.Subagent.ID

	// The child, while it runs: read-only, its events live.
	cs := e.stream(ws, child, "")
	cs.until("the child's read-only notice", isType("readonly"))
	code, body := e.req("POST", "/api/workspaces/"+ws.ID+"/sessions/"+child+"/prompt", map[string]string{"text": "hi"})
	if code != http.StatusConflict || !strings.Contains(string(body), "subagent") {
		t.Fatalf("prompt to a child: %d %s", code, body)
	}
	close(gate)
	cs.until("the child's answer, live", func(ev event) bool { return ev.Type == "result" && hasText(cs.seen, "There are 3 files.") })

	done := ps.until("the settled card", func(ev event) bool { return ev.Type == "subagent" && ev.Subagent.State != "running" })
	if done.Subagent.State != "completed" || done.Subagent.Text != "There are 3 files." || done.Subagent.Usage == nil || done.Subagent.Usage.TotalTokens == 0 {
		t.Fatalf("settled card %+v (usage %+v)", done.Subagent, done.Subagent.Usage)
	}
	ps.until("the parent's end", isType("result"))
	if !hasText(ps.seen, "The child counted 3 files.") {
		t.Fatalf("parent events %v", types(ps.seen))
	}

	var list []struct{ ID, Parent, Origin string }
	e.must(200, "GET", "/api/workspaces/"+ws.ID+"/sessions", nil, &list)
	found := false
	for _, s := range list {
		found = found || (s.ID == child && s.Parent == p && s.Origin == "subagent")
	}
	if !found {
		t.Fatalf("the child is not listed under its parent: %+v", list)
	}

	// Replays from the logs once both are closed (nobody watches them):
	// the parent with the child's card between the task call and its
	// result, the child read-only.
	ps.cancel()
	cs.cancel()
	e.waitClosed(ws, p)
	e.waitClosed(ws, child)
	rp := e.stream(ws, p, "")
	rp.until("the replayed answer", func(ev event) bool { return ev.Type == "assistant" && hasText([]event{ev}, "The child counted") })
	var order []string
	for _, ev := range rp.seen {
		switch ev.Type {
		case "subagent":
			if ev.Subagent.ID != child || ev.Subagent.Text != "There are 3 files." || ev.Subagent.Usage.TotalTokens == 0 {
				t.Fatalf("replayed card %+v", ev.Subagent)
			}
			fallthrough
		case "tool_call", "tool_result":
			order = append(order, ev.Type)
		}
	}
	if strings.Join(order, ",") != "tool_call,subagent,tool_result" {
		t.Fatalf("replayed parent: card not between the task call and its result: %v", order)
	}
	rc := e.stream(ws, child, "")
	rc.until("the child's replayed read-only notice", isType("readonly"))
	if !hasText(rc.seen, "There are 3 files.") {
		t.Fatalf("replayed child: %v", types(rc.seen))
	}
}

package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// RewindConversation takes the conversation back to before a turn's
// prompt: the next request no longer carries that prompt or what followed
// it, a resumed session sees the same (the rewind record), the log keeps
// every record, and a turn no longer in the view is refused.
func TestRewindConversationCutsTheHistoryAndReplaysTheCut(t *testing.T) {
	t.Parallel()
	text := func(s string) llmtest.Turn { return llmtest.Stream(llmtest.TextDelta(s), llmtest.Finish("stop")) }
	f := newFixture(t, []llmtest.Turn{text("one"), text("two"), text("three"), text("four")})
	ctx := context.Background()
	ss := f.open(agent.Options{NewID: "rw-1"})
	for _, p := range []string{"first prompt", "second prompt"} {
		if _, err := ss.Run(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := ss.RewindConversation(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := ss.Run(ctx, "second again"); err != nil {
		t.Fatal(err)
	}
	body := string(f.srv.Requests()[2].Body)
	if !strings.Contains(body, "first prompt") || strings.Contains(body, "second prompt") || strings.Contains(body, `"two"`) || !strings.Contains(body, "second again") {
		t.Fatalf("the request after the rewind:\n%s", body)
	}
	if err := ss.RewindConversation(ctx, 2); !errors.Is(err, agent.ErrTurnNotInView) {
		t.Fatalf("rewinding to a turn already cut away: %v", err)
	}
	_ = ss.Close(ctx)

	again := f.open(agent.Options{ID: "rw-1"})
	var got []string
	for _, m := range again.History() {
		got = append(got, m.Content)
	}
	if strings.Join(got, "|") != "first prompt|one|second again|three" {
		t.Fatalf("the resumed history: %q", got)
	}
	recs, err := agent.ReadSession(ctx, f.svc.Sessions(), "rw-1")
	if err != nil {
		t.Fatal(err)
	}
	var kept, rewinds int
	for _, r := range recs {
		if r.Type == agent.RecordUser && r.Message != nil && r.Message.Content == "second prompt" {
			kept++
		}
		if r.Type == agent.RecordRewind && r.Turn == 2 {
			rewinds++
		}
	}
	if kept != 1 || rewinds != 1 {
		t.Fatalf("the log: %d records of the rewound prompt (want 1: kept), %d rewind records (want 1)", kept, rewinds)
	}
	if err := again.RewindConversation(ctx, 9); !errors.Is(err, agent.ErrTurnNotInView) {
		t.Fatalf("an unknown turn: %v", err)
	}
	// The resumed session rewinds too, to its first turn: nothing is left.
	if err := again.RewindConversation(ctx, 1); err != nil || len(again.History()) != 0 {
		t.Fatalf("rewind to turn 1 after resuming: %v, %d messages left", err, len(again.History()))
	}
	if _, err := again.Run(ctx, "fresh start"); err != nil {
		t.Fatal(err)
	}
	if body := string(f.srv.Requests()[3].Body); strings.Contains(body, "first prompt") || !strings.Contains(body, "fresh start") {
		t.Fatalf("the request after rewinding everything:\n%s", body)
	}
	_ = again.Close(ctx)
}

// Replay honours rewind records: a rewind cuts the view at its turn's
// prompt; a rewind to a turn a compaction summarized, or to an unknown
// turn, changes nothing.
func TestReplayHonoursRewindRecords(t *testing.T) {
	msg := func(role llm.Role, s string) *llm.Message { return &llm.Message{Role: role, Content: s} }
	user := func(turn int, s string) agent.Record {
		return agent.Record{Type: agent.RecordUser, Turn: turn, Message: msg(llm.RoleUser, s)}
	}
	answer := func(turn int, s string) agent.Record {
		return agent.Record{Type: agent.RecordAssistant, Turn: turn, Message: msg(llm.RoleAssistant, s)}
	}
	contents := func(ms []llm.Message) string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Content)
		}
		return strings.Join(out, "|")
	}
	recs := []agent.Record{user(1, "p1"), answer(1, "a1"), user(2, "p2"), answer(2, "a2"),
		{Type: agent.RecordRewind, Turn: 2}, user(3, "p3"), answer(3, "a3")}
	if got := contents(agent.Replay(recs)); got != "p1|a1|p3|a3" {
		t.Fatalf("replay with a rewind to turn 2: %s", got)
	}
	recs = append(recs, agent.Record{Type: agent.RecordCompaction, Turn: 3, Message: msg(llm.RoleUser, "summary"), Kept: 2},
		agent.Record{Type: agent.RecordRewind, Turn: 3}, agent.Record{Type: agent.RecordRewind, Turn: 7}, user(4, "p4"))
	if got := contents(agent.Replay(recs)); got != "summary|p3|a3|p4" {
		t.Fatalf("a rewind to a turn before the compaction, and to an unknown turn: %s", got)
	}
}

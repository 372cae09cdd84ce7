package agent_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/plugins/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/tools"
)

func sampleRecords() []agent.Record {
	return []agent.Record{
		{Type: agent.RecordUser, Turn: 1, Message: &llm.Message{Role: llm.RoleUser, Content: "fix it"}},
		{Type: agent.RecordAssistant, Turn: 1, Step: 1, Message: &llm.Message{Role: llm.RoleAssistant, Reasoning: "think", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"ls"}`}}}},
		{Type: agent.RecordToolCall, Turn: 1, Step: 1, CallID: "c1", Name: "bash", Arguments: `{"command":"ls"}`},
		{Type: agent.RecordToolResult, Turn: 1, Step: 1, CallID: "c1", Name: "bash", Message: &llm.Message{Role: llm.RoleTool, ToolCallID: "c1", Name: "bash", Content: "a\nb"},
			Content: []tools.Content{tools.Text("a\nb")}, Meta: []byte(`{"exitCode":0}`)},
		{Type: agent.RecordUsage, Turn: 1, Step: 1, Usage: &llm.Usage{PromptTokens: 10, TotalTokens: 12, CompletionTokens: 2}},
		{Type: agent.RecordAssistant, Turn: 1, Step: 2, Message: &llm.Message{Role: llm.RoleAssistant, Content: "done ✓"}},
	}
}

func TestJournalAppendReadReplay(t *testing.T) {
	dir := t.TempDir()
	j, err := agent.CreateJournal(dir, agent.Record{ID: "s1", Cwd: "/w", Model: "p/m"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sampleRecords() {
		if err := j.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(j.Path())
	dst, _ := os.Stat(agent.SessionsDir(dir))
	if st.Mode().Perm() != 0o600 || dst.Mode().Perm() != 0o700 {
		t.Fatalf("modes %v %v", st.Mode(), dst.Mode())
	}
	recs, err := agent.ReadJournal(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 7 || recs[0].Type != agent.RecordSession || recs[0].V != agent.JournalVersion || recs[0].ID != "s1" || recs[6].Seq != 7 {
		t.Fatalf("records = %+v", recs)
	}
	var want []llm.Message
	for _, r := range sampleRecords() {
		if r.Message != nil {
			want = append(want, *r.Message)
		}
	}
	if got := agent.Replay(recs); !reflect.DeepEqual(got, want) {
		t.Fatalf("replay:\n%+v\nwant\n%+v", got, want)
	}
	// A second session with the same id is refused (O_EXCL).
	if _, err := agent.CreateJournal(dir, agent.Record{ID: "s1"}); err == nil {
		t.Fatal("duplicate create succeeded")
	}
}

// A crash mid-write tears only the last line: readers ignore it and
// OpenJournal truncates it before appending, so earlier lines survive.
func TestJournalTornTailIsDropped(t *testing.T) {
	dir := t.TempDir()
	j, err := agent.CreateJournal(dir, agent.Record{ID: "s2"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sampleRecords()[:2] {
		_ = j.Append(r)
	}
	_ = j.Close()
	f, _ := os.OpenFile(j.Path(), os.O_WRONLY|os.O_APPEND, 0)
	_, _ = f.WriteString(`{"type":"tool/call","seq":4,"callId":"c1","na`)
	_ = f.Close()
	recs, err := agent.ReadJournal(j.Path())
	if err != nil || len(recs) != 3 {
		t.Fatalf("read: %d %v", len(recs), err)
	}
	j2, recs2, err := agent.OpenJournal(dir, "s2")
	if err != nil || !reflect.DeepEqual(recs, recs2) {
		t.Fatalf("open: %v", err)
	}
	if err := j2.Append(agent.Record{Type: agent.RecordUser, Message: &llm.Message{Role: llm.RoleUser, Content: "next"}}); err != nil {
		t.Fatal(err)
	}
	_ = j2.Close()
	recs3, err := agent.ReadJournal(j.Path())
	if err != nil || len(recs3) != 4 || recs3[3].Seq != 4 || recs3[3].Message.Content != "next" {
		t.Fatalf("after append: %+v %v", recs3, err)
	}
	// Replay answers the dangling tool call so the history stays valid.
	h := agent.Replay(recs3)
	if len(h) != 4 || h[2].Role != llm.RoleTool || h[2].ToolCallID != "c1" || h[3].Content != "next" {
		t.Fatalf("history = %+v", h)
	}
	// A corrupt complete line is an error naming the line.
	bad := filepath.Join(dir, "bad.jsonl")
	_ = os.WriteFile(bad, []byte(`{"type":"session","id":"x"}`+"\n"+"garbage\n"), 0o600)
	if _, err := agent.ReadJournal(bad); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("corrupt: %v", err)
	}
}

func TestSessionIDs(t *testing.T) {
	id := agent.NewSessionID(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	if len(id) != len("20260102T030405-")+8 || id[:16] != "20260102T030405-" || !agent.ValidSessionID(id) {
		t.Fatal(id)
	}
	for _, bad := range []string{"", "../x", "a/b", ".hidden", "a b"} {
		if agent.ValidSessionID(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

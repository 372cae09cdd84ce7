package agent_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/sessions"
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

// Agent records go through the store unchanged: each reads back with its
// seq and fields, the line is what the agent's JSONL log always held, and
// Replay rebuilds the conversation (answering a dangling tool call).
func TestRecordsRoundTripAndReplay(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	state := t.TempDir()
	store := sessions.New(sessions.NewJSONL(agent.SessionsDir(state)))
	w, err := store.Create(ctx, sessions.Header{ID: "s1", Cwd: "/w", Model: "p/m"})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 1, 2, 3, 0, time.UTC)
	for _, r := range sampleRecords() {
		r.Time = at
		e, err := r.Entry()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Append(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	_ = w.Close()
	recs, err := agent.ReadJournal(agent.SessionPath(state, "s1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 7 || recs[0].Type != agent.RecordSession || recs[0].V != agent.JournalVersion || recs[0].ID != "s1" || recs[6].Seq != 7 {
		t.Fatalf("records = %+v", recs)
	}
	b, _ := os.ReadFile(agent.SessionPath(state, "s1"))
	line := strings.Split(string(b), "\n")[3]
	if want := `{"type":"tool/call","seq":4,"time":"2026-11-30T01:02:03Z","turn":1,"step":1,"callId":"c1","name":"bash","arguments":"{\"command\":\"ls\"}"}`; line != want {
		t.Fatalf("line 4:\n%s\nwant\n%s", line, want)
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
	h := agent.Replay(recs[:3]) // the call's result never came
	if len(h) != 3 || h[2].Role != llm.RoleTool || h[2].ToolCallID != "c1" || !strings.HasPrefix(h[2].Content, "Error:") {
		t.Fatalf("history = %+v", h)
	}
}

func TestSessionIDs(t *testing.T) {
	t.Parallel()
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

// inUse checks that err is the typed in-use error for session id held by
// pid (the holder's pid is read from /proc/locks on Linux).
func inUse(t *testing.T, err error, id string, pid int) {
	t.Helper()
	var iu *agent.SessionInUseError
	if !errors.Is(err, agent.ErrSessionInUse) || !errors.As(err, &iu) || iu.ID != id || !strings.Contains(err.Error(), "session "+id+" is ") {
		t.Fatalf("err = %v, want a *SessionInUseError for %s", err, id)
	}
	if runtime.GOOS == "linux" && (iu.PID != pid || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", pid))) {
		t.Fatalf("err = %v (pid %d), want holder pid %d", err, iu.PID, pid)
	}
}

// Service.Open: a session open in this process cannot be opened again
// until it is closed — before its log file exists (a new session is
// stored by its first kept record), and after, when the lock taken with
// the file also keeps other openers out. A failed second Open leaves the
// first session working, and after Close the session reopens.
func TestSessionOpenTwiceIsRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []llmtest.Turn{textTurn("one"), textTurn("two")})
	ctx := context.Background()
	ss := f.open(agent.Options{})
	id := ss.ID()
	again := func() {
		t.Helper()
		ss2, err := f.svc.Open(ctx, agent.Options{ID: id})
		if err == nil {
			_ = ss2.Close(ctx)
		}
		inUse(t, err, id, os.Getpid())
	}
	again() // nothing stored yet
	if _, err := ss.Run(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	again()
	// The file the first turn created is locked by the session: another
	// store over the same directory is refused too.
	_, _, err := sessions.New(sessions.NewJSONL(agent.SessionsDir(f.state))).Open(ctx, id)
	inUse(t, err, id, os.Getpid())

	if err := ss.Close(ctx); err != nil {
		t.Fatal(err)
	}
	ss3 := f.open(agent.Options{ID: id})
	if _, err := ss3.Run(ctx, "second"); err != nil {
		t.Fatal(err)
	}
	_ = ss3.Close(ctx)
	recs, err := agent.ReadSession(ctx, f.svc.Sessions(), id)
	if err != nil {
		t.Fatal(err)
	}
	var prompts []string
	for i, r := range recs {
		if r.Seq != int64(i+1) {
			t.Fatalf("record %d has seq %d", i, r.Seq)
		}
		if r.Type == agent.RecordUser && r.Source == "" {
			prompts = append(prompts, r.Message.Content)
		}
	}
	if !reflect.DeepEqual(prompts, []string{"first", "second"}) {
		t.Fatalf("prompts = %q", prompts)
	}

	// A new session closed before writing anything reopens by id.
	ss4 := f.open(agent.Options{})
	_ = ss4.Close(ctx)
	ss5 := f.open(agent.Options{ID: ss4.ID()})
	_ = ss5.Close(ctx)
}

package agent_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/plugins/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/llm/llmtest"
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

// One Journal at a time: while a log is open (created or reopened), a
// second OpenJournal of it fails at once with the typed error, reads
// nothing and leaves the file as it was, including a last line the
// holder is still writing (a torn tail is truncated only under the
// lock). After Close the log opens again.
func TestJournalLockOneOpener(t *testing.T) {
	for _, holder := range []string{"CreateJournal", "OpenJournal"} {
		t.Run(holder, func(t *testing.T) {
			dir := t.TempDir()
			j, err := agent.CreateJournal(dir, agent.Record{ID: "s3"})
			if err != nil {
				t.Fatal(err)
			}
			if holder == "OpenJournal" {
				_ = j.Close()
				if j, _, err = agent.OpenJournal(dir, "s3"); err != nil {
					t.Fatal(err)
				}
			}
			for _, r := range sampleRecords()[:2] {
				if err := j.Append(r); err != nil {
					t.Fatal(err)
				}
			}
			// The holder's next record, half written.
			f, _ := os.OpenFile(j.Path(), os.O_WRONLY|os.O_APPEND, 0)
			_, _ = f.WriteString(`{"type":"tool/call","seq":4,"callId":"c1","na`)
			_ = f.Close()
			before, _ := os.ReadFile(j.Path())

			_, _, err = agent.OpenJournal(dir, "s3")
			inUse(t, err, "s3", os.Getpid())
			if !strings.Contains(err.Error(), "already open in this harness process") || !strings.Contains(err.Error(), j.Path()) {
				t.Fatalf("message = %v", err)
			}
			if after, _ := os.ReadFile(j.Path()); string(after) != string(before) {
				t.Fatalf("the refused open changed the log:\n%s\nwant\n%s", after, before)
			}
			// Readers need no lock.
			if list, err := agent.ListSessions(dir); err != nil || len(list) != 1 || list[0].ID != "s3" {
				t.Fatalf("list while locked: %+v %v", list, err)
			}

			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			j2, recs, err := agent.OpenJournal(dir, "s3")
			if err != nil || len(recs) != 3 {
				t.Fatalf("reopen after close: %d records, %v", len(recs), err)
			}
			_, _, err = agent.OpenJournal(dir, "s3")
			inUse(t, err, "s3", os.Getpid())
			if err := j2.Append(agent.Record{Type: agent.RecordUser, Message: &llm.Message{Role: llm.RoleUser, Content: "next"}}); err != nil {
				t.Fatal(err)
			}
			_ = j2.Close()
			if recs, err := agent.ReadJournal(j.Path()); err != nil || len(recs) != 4 || recs[3].Seq != 4 {
				t.Fatalf("after append: %+v %v", recs, err)
			}
		})
	}
}

// lockHelperEnv makes the test binary, re-executed, hold a journal open
// (see TestJournalLockHelper).
const lockHelperEnv = "HARNESS_AGENT_TEST_LOCK_HELPER"

// TestJournalLockHelper is not a test: run with lockHelperEnv=DIR it
// opens the journal of session "s4" under DIR, appends one record,
// prints "locked" and waits until stdin closes or it is killed.
func TestJournalLockHelper(t *testing.T) {
	dir := os.Getenv(lockHelperEnv)
	if dir == "" {
		t.Skip("helper process only")
	}
	j, _, err := agent.OpenJournal(dir, "s4")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(3)
	}
	if err := j.Append(agent.Record{Type: agent.RecordUser, Turn: 2, Message: &llm.Message{Role: llm.RoleUser, Content: "from the helper"}}); err != nil {
		fmt.Println("error:", err)
		os.Exit(3)
	}
	fmt.Println("locked")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	_ = j.Close()
}

// Another process holding a session's log: OpenJournal fails at once
// naming that process, readers still read, and when the holder is killed
// (no Close) its lock goes with it and the log reopens intact.
func TestJournalLockAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	j, err := agent.CreateJournal(dir, agent.Record{ID: "s4"})
	if err != nil {
		t.Fatal(err)
	}
	_ = j.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestJournalLockHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), lockHelperEnv+"="+dir)
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "locked" {
		t.Fatalf("helper said %q", line)
	}

	_, _, err = agent.OpenJournal(dir, "s4")
	inUse(t, err, "s4", cmd.Process.Pid)
	if !strings.Contains(err.Error(), "is in use by another harness process") {
		t.Fatalf("message = %v", err)
	}
	if list, err := agent.ListSessions(dir); err != nil || len(list) != 1 || list[0].Turns != 1 {
		t.Fatalf("list while locked: %+v %v", list, err)
	}

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	j2, recs, err := agent.OpenJournal(dir, "s4")
	if err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
	defer j2.Close()
	if len(recs) != 2 || recs[1].Seq != 2 || recs[1].Message.Content != "from the helper" {
		t.Fatalf("records = %+v", recs)
	}
}

// Service.Open: a session open in this process cannot be opened again
// until it is closed — before its log file exists (a new session's file
// is created by its first kept record), and after, when the lock taken
// with the file also keeps other openers out. A failed second Open leaves
// the first session working, and after Close the session reopens.
func TestSessionOpenTwiceIsRefused(t *testing.T) {
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
	again() // no file yet
	if _, err := ss.Run(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	again()
	// The file the first turn created is locked by the session.
	_, _, err := agent.OpenJournal(f.state, id)
	inUse(t, err, id, os.Getpid())

	if err := ss.Close(ctx); err != nil {
		t.Fatal(err)
	}
	ss3 := f.open(agent.Options{ID: id})
	if _, err := ss3.Run(ctx, "second"); err != nil {
		t.Fatal(err)
	}
	_ = ss3.Close(ctx)
	recs, err := agent.ReadJournal(ss.LogPath())
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

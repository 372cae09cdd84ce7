package sessions_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/sessions/sessionstest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var bg = context.Background()

// jsonlProvider is the contract suite's view of sessions-jsonl: a fresh
// directory per case; a torn write is half a line at the end of the log.
func jsonlProvider() sessionstest.Provider {
	return sessionstest.Provider{New: func(t *testing.T) sessionstest.Store {
		dir := t.TempDir()
		return sessionstest.Store{
			Open: func() *sessions.Service { return sessions.New(sessions.NewJSONL(dir)) },
			Tear: func(t *testing.T, id string, seq int64) {
				f, err := os.OpenFile(filepath.Join(dir, id+".jsonl"), os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if _, err := fmt.Fprintf(f, `{"type":"tool/call","seq":%d,"callId":"c1","na`, seq); err != nil {
					t.Fatal(err)
				}
			},
		}
	}}
}

func TestJSONLContract(t *testing.T) {
	t.Parallel()
	sessionstest.Run(t, jsonlProvider())
}

// The on-disk format is the agent's JSONL log, unchanged: the header line
// and a record line are byte for byte what earlier versions wrote, files
// are 0600 in a 0700 directory, and a log written before the move reads.
func TestJSONLFormat(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sessions")
	s := sessions.New(sessions.NewJSONL(dir))
	at := time.Date(2026, 11, 30, 1, 2, 3, 0, time.UTC)
	w, err := s.Create(bg, sessions.Header{ID: "fmt", Cwd: "/w", Model: "p/m", Time: at})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append(bg, sessions.Entry{Type: "user", Time: at, Fields: []byte(`{"turn":1,"message":{"role":"user","content":"hi"}}`)}); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	b, err := os.ReadFile(filepath.Join(dir, "fmt.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"session","seq":1,"time":"2026-11-30T01:02:03Z","v":1,"id":"fmt","cwd":"/w","model":"p/m"}` + "\n" +
		`{"type":"user","seq":2,"time":"2026-11-30T01:02:03Z","turn":1,"message":{"role":"user","content":"hi"}}` + "\n"
	if string(b) != want {
		t.Fatalf("log:\n%s\nwant\n%s", b, want)
	}
	st, _ := os.Stat(filepath.Join(dir, "fmt.jsonl"))
	dst, _ := os.Stat(dir)
	if st.Mode().Perm() != 0o600 || dst.Mode().Perm() != 0o700 {
		t.Fatalf("modes %v %v", st.Mode(), dst.Mode())
	}
	// A corrupt complete line is an error naming the line.
	_ = os.WriteFile(filepath.Join(dir, "bad.jsonl"), []byte(`{"type":"session","seq":1,"id":"bad"}`+"\n"+"garbage\n"), 0o600)
	if _, err := s.Read(bg, "bad"); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("corrupt: %v", err)
	}
	// A symlink in a log's place is not followed.
	_ = os.Symlink(filepath.Join(dir, "fmt.jsonl"), filepath.Join(dir, "link.jsonl"))
	if _, err := s.Read(bg, "link"); err == nil {
		t.Fatal("a symlinked log was read")
	}
}

// lockHelperEnv makes the test binary, re-executed, hold a session open
// (see TestJSONLLockHelper).
const lockHelperEnv = "HARNESS_SESSIONS_TEST_LOCK_HELPER"

// TestJSONLLockHelper is not a test: run with lockHelperEnv=DIR it opens
// session "s4" under DIR, appends one record, prints "locked" and waits
// until stdin closes or it is killed.
func TestJSONLLockHelper(t *testing.T) {
	dir := os.Getenv(lockHelperEnv)
	if dir == "" {
		t.Skip("helper process only")
	}
	w, _, err := sessions.New(sessions.NewJSONL(dir)).Open(bg, "s4")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(3)
	}
	if _, err := w.Append(bg, sessions.Entry{Type: "user", Fields: []byte(`{"turn":2,"message":{"role":"user","content":"from the helper"}}`)}); err != nil {
		fmt.Println("error:", err)
		os.Exit(3)
	}
	fmt.Println("locked")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	_ = w.Close()
}

// Another process holding a session: Open and Delete fail at once naming
// that process's pid, readers still read, and when the holder is killed
// (no Close) its lock goes with it and the log reopens intact.
func TestJSONLLockAcrossProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := sessions.New(sessions.NewJSONL(dir))
	w, err := s.Create(bg, sessions.Header{ID: "s4"})
	if err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestJSONLLockHelper$", "-test.count=1")
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
	_, _, err = s.Open(bg, "s4")
	var iu *sessions.InUseError
	if !errors.As(err, &iu) || iu.PID != cmd.Process.Pid || !strings.Contains(err.Error(), fmt.Sprintf("is in use by another harness process (pid %d;", cmd.Process.Pid)) {
		t.Fatalf("open: %v, want the holder pid %d", err, cmd.Process.Pid)
	}
	if err := s.Delete(bg, "s4"); !errors.Is(err, sessions.ErrInUse) {
		t.Fatalf("delete: %v", err)
	}
	if p, err := s.List(bg, sessions.Query{}); err != nil || len(p.Sessions) != 1 || p.Sessions[0].Turns != 1 {
		t.Fatalf("list while locked: %+v %v", p, err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	w2, recs, err := s.Open(bg, "s4")
	if err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
	defer w2.Close()
	if len(recs) != 2 || recs[1].Seq != 2 || !strings.Contains(string(recs[1].Data), "from the helper") {
		t.Fatalf("records = %+v", recs)
	}
}

// In this process: the second opener's message says so and names the log.
func TestJSONLInUseInProcessMessage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, err := sessions.New(sessions.NewJSONL(dir)).Create(bg, sessions.Header{ID: "s3"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, s := range []*sessions.Service{sessions.New(sessions.NewJSONL(dir))} {
		_, _, err := s.Open(bg, "s3")
		if err == nil || !strings.Contains(err.Error(), "already open in this harness process") || !strings.Contains(err.Error(), filepath.Join(dir, "s3.jsonl")) {
			t.Fatalf("message = %v", err)
		}
	}
}

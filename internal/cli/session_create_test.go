package cli_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// unsetKeyVar names a variable no test sets: llm-openai reads apiKeyEnv
// from the process environment, which tests running in parallel must not
// change.
const unsetKeyVar = "HARNESS_E2E_UNSET_KEY"

// requireUnset fails the test when name is set in the process environment.
func requireUnset(t *testing.T, name string) {
	t.Helper()
	if _, ok := os.LookupEnv(name); ok {
		t.Fatalf("$%s is set: unset it to run this test", name)
	}
}

// noKey makes the test route of an agentManifest require a key read from
// an unset variable.
func noKey(t *testing.T, m string) string {
	t.Helper()
	requireUnset(t, unsetKeyVar)
	return strings.Replace(m, "apiKey: sk-test", "apiKeyEnv: "+unsetKeyVar+"\n      requireAPIKey: true", 1)
}

// sessionFiles lists the session logs under state.
func sessionFiles(t *testing.T, state string) []string {
	t.Helper()
	entries, err := os.ReadDir(agent.SessionsDir(state))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// A run that fails on a configuration error (exit 2) stores no session:
// nothing in the sessions directory, nothing for `sessions` to list or
// for --continue to resume, and no request reached the model.
func TestRunConfigErrorsLeaveNoSession(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	cases := []struct {
		name   string
		edit   func(t *testing.T, m string) string
		args   []string
		stderr string
	}{
		{"missing API key", noKey, nil, unsetKeyVar},
		{"--thinking", nil, []string{"--thinking"}, "no thinking switch"},
		{"--reasoning-effort", nil, []string{"--reasoning-effort", "high"}, "no reasoning effort"},
		{"thinking in the agent row", func(_ *testing.T, m string) string {
			return strings.Replace(m, "  - name: agent\n", "  - name: agent\n    config:\n      thinking: enabled\n", 1)
		}, nil, "the agent row of harness.yml sets thinking: enabled"},
		{"unknown --model", nil, []string{"--model", "nope/x"}, `provider "nope" is not registered`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t, []llmtest.Turn{text("ok")})
			state := t.TempDir()
			good := agentManifest(srv.URL, state, "")
			bad := good
			if tc.edit != nil {
				bad = tc.edit(t, good)
			}
			args := append(append([]string{"run"}, tc.args...), "dangling")
			r := runAgent(t, repo, bad, "", args...)
			if r.code != 2 || !strings.Contains(r.stderr, tc.stderr) {
				t.Fatalf("exit %d, want 2 and %q on stderr:\n%s", r.code, tc.stderr, r.stderr)
			}
			if names := sessionFiles(t, state); len(names) != 0 {
				t.Fatalf("session files left: %v", names)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Fatalf("%d requests reached the model", n)
			}
			s := runAgent(t, repo, good, "", "sessions", "--json")
			if s.code != 0 || strings.TrimSpace(s.stdout) != "[]" {
				t.Fatalf("sessions: exit %d: %s%s", s.code, s.stdout, s.stderr)
			}
			c := runAgent(t, repo, good, "", "run", "--continue", "next")
			if c.code != 2 || !strings.Contains(c.stderr, "--continue: no session for") {
				t.Fatalf("--continue: exit %d: %s", c.code, c.stderr)
			}
		})
	}
}

// A run whose request failed (HTTP 500 after the retries) keeps the
// session with its prompt, and --continue resumes it.
func TestRunRequestFailureKeepsSession(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	state := t.TempDir()
	srv := llmtest.New(t, []llmtest.Turn{llmtest.Error(500, "boom"), llmtest.Error(500, "boom"), llmtest.Error(500, "boom"), text("fine")})
	m := agentManifest(srv.URL, state, "")
	if r := runAgent(t, repo, m, "", "run", "dangling"); r.code != 1 || !strings.Contains(r.stderr, "SERVER") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	s := runAgent(t, repo, m, "", "sessions", "--json")
	var list []agent.SessionInfo
	if err := json.Unmarshal([]byte(s.stdout), &list); err != nil || len(list) != 1 || list[0].Title != "dangling" {
		t.Fatalf("sessions: %s %v", s.stdout, err)
	}
	if r := runAgent(t, repo, m, "", "run", "--continue", "next"); r.code != 0 {
		t.Fatalf("--continue: exit %d: %s", r.code, r.stderr)
	}
	reqs := srv.Requests()
	w, _ := reqs[len(reqs)-1].Wire()
	if s := w.History(); !strings.HasPrefix(s, "user:dangling|assistant:[no reply: the model request failed: SERVER (HTTP 500): boom]|user:next") {
		t.Fatalf("history = %s", s)
	}
}

// In chat, a turn refused for a missing key is not stored; after the
// manifest is fixed (which restarts the agent plugin, so the session is
// reopened by id before it has a file) the next turn starts the log.
func TestChatMissingKeyThenFixedManifest(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	srv := llmtest.New(t, []llmtest.Turn{text("hello after the fix")})
	state := t.TempDir()
	cfgDir := t.TempDir()
	cfg := filepath.Join(cfgDir, "harness.yml")
	save := func(s string) { t.Helper(); write(t, cfgDir, "harness.yml", s) }
	good := agentManifest(srv.URL, state, "")
	save(noKey(t, good))
	c := startChat(t, repo, cfg)
	c.say("dangling", c.errb, unsetKeyVar)
	if names := sessionFiles(t, state); len(names) != 0 {
		t.Fatalf("session files after the refused turn: %v", names)
	}
	// The key and a changed agent row: the agent plugin restarts.
	time.Sleep(20 * time.Millisecond) // a distinct modification time
	save(strings.Replace(good, "  - name: agent\n", "  - name: agent\n    config:\n      maxSteps: 7\n", 1))
	c.say("next", c.out, "hello after the fix")
	if code := c.end(); code != 0 {
		t.Fatalf("exit %d: %s", code, c.errb.String())
	}
	if !strings.Contains(c.errb.String(), "configuration reloaded from") {
		t.Fatalf("no reload:\n%s", c.errb.String())
	}
	w, _ := srv.Requests()[0].Wire()
	if s := w.History(); s != "user:next" {
		t.Fatalf("history = %s", s)
	}
	list, err := agent.ListSessions(state)
	if err != nil || len(list) != 1 || list[0].Turns != 1 || list[0].Title != "next" {
		t.Fatalf("sessions = %+v %v", list, err)
	}
}

// When a reload restarts the agent and the session cannot be reopened
// (its model route is gone), chat rolls the tree back, reopens the session
// on the previous agent and goes on (it used to close a nil session and
// panic, then to end with exit 2).
func TestChatReopenFailureAfterReload(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	srv := llmtest.New(t, []llmtest.Turn{text("first answer"), text("second answer")})
	state := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "harness.yml")
	good := agentManifest(srv.URL, state, "")
	if err := os.WriteFile(cfg, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startChat(t, repo, cfg)
	c.say("one", c.out, "first answer")
	time.Sleep(20 * time.Millisecond) // a distinct modification time
	gone := strings.Replace(good, "provider: test", "provider: other", 1)
	gone = strings.Replace(gone, "  - name: agent\n", "  - name: agent\n    config:\n      maxSteps: 7\n", 1)
	if err := os.WriteFile(cfg, []byte(gone), 0o644); err != nil {
		t.Fatal(err)
	}
	c.say("two", c.out, "second answer")
	if code := c.end(); code != 0 || !strings.Contains(c.errb.String(), "the changed configuration was not applied (the previous one runs again): reopening session") {
		t.Fatalf("exit %d:\n%s", code, c.errb.String())
	}
	if reqs := srv.Requests(); len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	} else if w, _ := reqs[1].Wire(); len(w.Messages) != 4 {
		t.Fatalf("second request has %d messages, want system, one, first answer, two", len(w.Messages))
	}
}

// Two harness processes on one session: while `run --continue` waits on
// the model, a second `run --continue` in the same directory exits 2 at
// once naming the first process, sends no request and writes nothing; the
// journal keeps one record per seq and each prompt once, and a later
// `--continue` resumes it. `sessions` lists it meanwhile.
func TestRunContinueWhileAnotherProcessHoldsTheSession(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := llmtest.New(t, []llmtest.Turn{text("one"), text("two"), text("three")},
		llmtest.WithCheck(func(_ llmtest.Request, w llmtest.WireRequest) *llmtest.Turn {
			if last := w.Messages[len(w.Messages)-1]; last.Role == "user" && last.Text() == "slow" {
				once.Do(func() { close(entered) }) // the first process's request waits
				<-release
			}
			return nil
		}))
	released := false
	unblock := func() {
		if !released {
			released = true
			close(release)
		}
	}
	t.Cleanup(unblock) // before the server closes
	state := t.TempDir()
	m := agentManifest(srv.URL, state, "")
	if r := runAgent(t, repo, m, "", "run", "first"); r.code != 0 {
		t.Fatalf("first run: exit %d\n%s", r.code, r.stderr)
	}

	a := processCommand(t, repo, m, baseEnv(), "run", "--continue", "slow")
	var aerr bytes.Buffer
	a.Stderr = &aerr
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = a.Process.Kill(); _ = a.Wait() }()
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatalf("the first process never called the model; stderr:\n%s", aerr.String())
	}

	b := processCommand(t, repo, m, baseEnv(), "run", "--continue", "fast")
	var berr bytes.Buffer
	b.Stderr = &berr
	_ = b.Run()
	want := fmt.Sprintf("is in use by another harness process (pid %d;", a.Process.Pid)
	if code := b.ProcessState.ExitCode(); code != 2 || !strings.Contains(berr.String(), want) {
		t.Fatalf("second process: exit %d, want 2 and %q on stderr:\n%s", code, want, berr.String())
	}
	r := runAgent(t, repo, m, "", "sessions", "--json")
	var listed []agent.SessionInfo
	if err := json.Unmarshal([]byte(r.stdout), &listed); r.code != 0 || err != nil || len(listed) != 1 || listed[0].Title != "first" {
		t.Fatalf("sessions while held: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}

	unblock()
	if err := a.Wait(); err != nil {
		t.Fatalf("first process: %v\n%s", err, aerr.String())
	}
	if r := runAgent(t, repo, m, "", "run", "--continue", "third"); r.code != 0 {
		t.Fatalf("third run: exit %d\n%s", r.code, r.stderr)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Fatalf("%d requests, want 3 (the refused process sends none)", n)
	}
	list, _ := agent.ListSessions(state)
	if len(list) != 1 {
		t.Fatalf("sessions: %+v", list)
	}
	recs, err := agent.ReadJournal(list[0].Path)
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
	if got := strings.Join(prompts, ","); got != "first,slow,third" {
		t.Fatalf("prompts = %s", got)
	}
}

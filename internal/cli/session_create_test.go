package cli_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/internal/cli"
	"github.com/dshgo/harness/internal/cli/agente2e"
	"github.com/dshgo/harness/plugins/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// noKey makes the test route of an agentManifest require a key read from
// an unset variable.
func noKey(t *testing.T, m string) string {
	t.Helper()
	t.Setenv("HARNESS_E2E_UNSET_KEY", "")
	os.Unsetenv("HARNESS_E2E_UNSET_KEY")
	return strings.Replace(m, "apiKey: sk-test", "apiKeyEnv: HARNESS_E2E_UNSET_KEY\n      requireAPIKey: true", 1)
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
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	cases := []struct {
		name   string
		edit   func(t *testing.T, m string) string
		args   []string
		stderr string
	}{
		{"missing API key", noKey, nil, "HARNESS_E2E_UNSET_KEY"},
		{"--thinking", nil, []string{"--thinking"}, "no thinking switch"},
		{"--reasoning-effort", nil, []string{"--reasoning-effort", "high"}, "no reasoning effort"},
		{"thinking in the agent row", func(_ *testing.T, m string) string {
			return strings.Replace(m, "  - name: agent\n    config:\n", "  - name: agent\n    config:\n      thinking: enabled\n", 1)
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
	var got []string
	for _, msg := range w.Messages[1:] {
		got = append(got, msg.Role+":"+msg.Text())
	}
	if s := strings.Join(got, "|"); s != "user:dangling|user:next" {
		t.Fatalf("history = %s", s)
	}
}

// In chat, a turn refused for a missing key is not stored; after the
// manifest is fixed (which restarts the agent plugin, so the session is
// reopened by id before it has a file) the next turn starts the log.
func TestChatMissingKeyThenFixedManifest(t *testing.T) {
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	srv := llmtest.New(t, []llmtest.Turn{text("hello after the fix")})
	state := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "harness.yml")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(cfg, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	good := agentManifest(srv.URL, state, "")
	write(noKey(t, good))
	var mods []fx.Option
	for _, p := range agente2e.Needed() {
		mods = append(mods, fxcore.ProvidePlugin(p))
	}
	stdinR, stdinW := io.Pipe()
	out, errb := &syncBuffer{}, &syncBuffer{}
	env := &cli.Env{Stdout: out, Stderr: errb, Stdin: stdinR, Modules: mods,
		LookupEnv: func(string) (string, bool) { return "", false }, Ctx: context.Background()}
	wd, _ := os.Getwd()
	if err := os.Chdir(repo); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	code := make(chan int, 1)
	go func() { code <- cli.Run([]string{"--config", cfg, "chat"}, env) }()
	wait := func(b *syncBuffer, want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(b.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q; stdout:\n%s\nstderr:\n%s", want, out.String(), errb.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	_, _ = io.WriteString(stdinW, "dangling\n")
	wait(errb, "HARNESS_E2E_UNSET_KEY")
	if names := sessionFiles(t, state); len(names) != 0 {
		t.Fatalf("session files after the refused turn: %v", names)
	}
	// The key and a changed agent row: the agent plugin restarts.
	time.Sleep(20 * time.Millisecond) // a distinct modification time
	write(strings.Replace(good, "      stateDir: "+state, "      stateDir: "+state+"\n      maxSteps: 7", 1))
	_, _ = io.WriteString(stdinW, "next\n")
	wait(out, "hello after the fix")
	_ = stdinW.Close()
	if c := <-code; c != 0 {
		t.Fatalf("exit %d: %s", c, errb.String())
	}
	if !strings.Contains(errb.String(), "configuration reloaded from") {
		t.Fatalf("no reload:\n%s", errb.String())
	}
	w, _ := srv.Requests()[0].Wire()
	var got []string
	for _, msg := range w.Messages[1:] {
		got = append(got, msg.Role+":"+msg.Text())
	}
	if s := strings.Join(got, "|"); s != "user:next" {
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
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	srv := llmtest.New(t, []llmtest.Turn{text("first answer"), text("second answer")})
	state := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "harness.yml")
	good := agentManifest(srv.URL, state, "")
	if err := os.WriteFile(cfg, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	var mods []fx.Option
	for _, p := range agente2e.Needed() {
		mods = append(mods, fxcore.ProvidePlugin(p))
	}
	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	out, errb := &syncBuffer{}, &syncBuffer{}
	env := &cli.Env{Stdout: out, Stderr: errb, Stdin: stdinR, Modules: mods,
		LookupEnv: func(string) (string, bool) { return "", false }, Ctx: context.Background()}
	wd, _ := os.Getwd()
	if err := os.Chdir(repo); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	code := make(chan int, 1)
	go func() { code <- cli.Run([]string{"--config", cfg, "chat"}, env) }()
	_, _ = io.WriteString(stdinW, "one\n")
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), "first answer") {
		if time.Now().After(deadline) {
			t.Fatalf("no answer; stderr:\n%s", errb.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // a distinct modification time
	gone := strings.Replace(good, "provider: test", "provider: other", 1)
	gone = strings.Replace(gone, "      stateDir: "+state, "      stateDir: "+state+"\n      maxSteps: 7", 1)
	if err := os.WriteFile(cfg, []byte(gone), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _ = io.WriteString(stdinW, "two\n")
	for !strings.Contains(out.String(), "second answer") {
		if time.Now().After(deadline.Add(20 * time.Second)) {
			t.Fatalf("no second answer; stderr:\n%s", errb.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	_ = stdinW.Close()
	select {
	case c := <-code:
		if c != 0 || !strings.Contains(errb.String(), "the changed configuration was not applied (the previous one runs again): reopening session") {
			t.Fatalf("exit %d:\n%s", c, errb.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("chat did not end; stderr:\n%s", errb.String())
	}
	if reqs := srv.Requests(); len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	} else if w, _ := reqs[1].Wire(); len(w.Messages) != 4 {
		t.Fatalf("second request has %d messages, want system, one, first answer, two", len(w.Messages))
	}
}

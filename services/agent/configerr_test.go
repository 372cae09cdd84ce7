package agent_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	llmopenai "github.com/dshgo/harness/plugins/llm-openai"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// mountRoutes adds two routes to f: "plain" (model m0, no thinking switch)
// on the scripted server, and "nokey" (model m1) that requires an API key
// it does not have.
func (f *fixture) mountRoutes() {
	f.t.Helper()
	f.t.Setenv("HARNESS_AGENT_TEST_UNSET_KEY", "")
	os.Unsetenv("HARNESS_AGENT_TEST_UNSET_KEY")
	require := true
	for _, cfg := range []llmopenai.Config{
		{Provider: "plain", BaseURL: f.srv.URL, APIKey: "sk-test", Models: []llmopenai.ModelConfig{{Name: "m0", Default: true}}},
		{Provider: "nokey", BaseURL: f.srv.URL, APIKeyEnv: "HARNESS_AGENT_TEST_UNSET_KEY", RequireAPIKey: &require,
			Models: []llmopenai.ModelConfig{{Name: "m1", Default: true, Thinking: llm.ThinkingDisabled}}},
	} {
		fb := f.rc.Plugin(llmopenai.Plugin, cfg)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := fb.Await(ctx)
		cancel()
		if err != nil {
			f.t.Fatalf("route %s: %v", cfg.Provider, err)
		}
	}
}

// sessionFiles lists the files of the sessions directory.
func (f *fixture) sessionFiles() []string {
	f.t.Helper()
	entries, err := os.ReadDir(agent.SessionsDir(f.state))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		f.t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// A configuration error, found by Open or by the first model call before
// it sends anything, leaves no session file: nothing to list or continue.
func TestConfigErrorsLeaveNoSession(t *testing.T) {
	cases := []struct {
		name   string
		cfg    agent.Config
		opts   agent.Options
		atOpen bool // Open fails; otherwise the first Run does
		check  func(error) bool
		text   string
	}{
		{name: "missing API key", opts: agent.Options{Model: "nokey"},
			check: func(err error) bool { return errors.Is(err, llm.ErrMissingAPIKey) }, text: "HARNESS_AGENT_TEST_UNSET_KEY"},
		{name: "thinking on a model without the switch", opts: agent.Options{Model: "plain", Thinking: llm.ThinkingEnabled}, atOpen: true,
			check: unsupported, text: "no thinking switch"},
		{name: "thinking from the agent row", cfg: agent.Config{Model: "plain/m0", Thinking: llm.ThinkingEnabled}, atOpen: true,
			check: unsupported, text: "the agent row of harness.yml sets thinking: enabled"},
		{name: "reasoning effort on a model without the switch", opts: agent.Options{Model: "plain/m0", ReasoningEffort: "high"}, atOpen: true,
			check: unsupported, text: "no reasoning effort"},
		{name: "invalid thinking mode", opts: agent.Options{Thinking: "sometimes"}, atOpen: true,
			check: unsupported, text: "sometimes"},
		{name: "unknown provider", opts: agent.Options{Model: "nope/x"}, atOpen: true,
			check: func(err error) bool { return errors.Is(err, llm.ErrNoAdapter) }, text: `"nope"`},
		{name: "unknown model", opts: agent.Options{Model: "test/zzz"}, atOpen: true,
			check: func(err error) bool { return errors.Is(err, llm.ErrNoAdapter) }, text: `no model "zzz"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixtureCfg(t, nil, tc.cfg)
			f.mountRoutes()
			var err error
			ss, oerr := f.svc.Open(context.Background(), tc.opts)
			if oerr != nil {
				err = oerr
			} else {
				defer ss.Close(context.Background())
				for range 2 { // a retried prompt is refused the same way
					var res *agent.Result
					res, err = ss.Run(context.Background(), "dangling")
					if err == nil || !res.IsError {
						t.Fatalf("run: %+v %v", res, err)
					}
					if h := ss.History(); len(h) != 0 {
						t.Fatalf("history after a refused turn: %+v", h)
					}
				}
				if err := ss.Close(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			if (oerr != nil) != tc.atOpen {
				t.Fatalf("open error %v, want one at open: %v (run error %v)", oerr, tc.atOpen, err)
			}
			if !tc.check(err) || !agent.IsConfigError(err) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("error %v, want one containing %q", err, tc.text)
			}
			if names := f.sessionFiles(); len(names) != 0 {
				t.Fatalf("session files left: %v", names)
			}
			if list, err := agent.ListSessions(f.state); err != nil || len(list) != 0 {
				t.Fatalf("sessions: %+v %v", list, err)
			}
			if n := len(f.srv.Requests()); n != 0 {
				t.Fatalf("%d requests reached the model", n)
			}
		})
	}
}

func unsupported(err error) bool {
	le, ok := llm.AsError(err)
	return ok && le.Code == llm.CodeUnsupportedOption
}

// Resuming a stored session with options its model cannot honour, or on a
// route without its key, appends nothing; the next good turn continues
// the stored conversation without the refused prompts.
func TestResumeWithConfigErrorAppendsNothing(t *testing.T) {
	f := newFixture(t, []llmtest.Turn{textTurn("first"), textTurn("second")})
	f.mountRoutes()
	ss := f.open(agent.Options{})
	if _, err := ss.Run(context.Background(), "one"); err != nil {
		t.Fatal(err)
	}
	id, path := ss.ID(), ss.LogPath()
	_ = ss.Close(context.Background())
	stored, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []agent.Options{
		{ID: id, Model: "plain", Thinking: llm.ThinkingEnabled},
		{ID: id, Model: "plain", ReasoningEffort: "max"},
		{ID: id, Model: "nope/x"},
	} {
		if ss, err := f.svc.Open(context.Background(), o); err == nil {
			_ = ss.Close(context.Background())
			t.Fatalf("open %+v: no error", o)
		} else if !agent.IsConfigError(err) {
			t.Fatalf("open %+v: %v", o, err)
		}
	}
	ss, err = f.svc.Open(context.Background(), agent.Options{ID: id, Model: "nokey"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ss.Run(context.Background(), "dangling"); !errors.Is(err, llm.ErrMissingAPIKey) {
		t.Fatalf("run on nokey: %v", err)
	}
	if h := ss.History(); len(h) != 2 {
		t.Fatalf("history = %+v", h)
	}
	_ = ss.Close(context.Background())
	if now, _ := os.ReadFile(path); !bytes.Equal(now, stored) {
		t.Fatalf("the log changed:\n%s\nwas:\n%s", now, stored)
	}
	ss = f.open(agent.Options{ID: id})
	if _, err := ss.Run(context.Background(), "next"); err != nil {
		t.Fatal(err)
	}
	if s := f.wire(1).History(); s != "user:one|assistant:first|user:next" {
		t.Fatalf("request history = %s", s)
	}
}

// A failure after a request was attempted keeps the session with the
// prompt, so it can be resumed.
func TestRequestFailuresKeepTheSession(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		turns   []llmtest.Turn
		partial string // text streamed before the failure
	}{
		// The fixture's route retries twice.
		{"HTTP 500", []llmtest.Turn{llmtest.Error(500, "boom"), llmtest.Error(500, "boom"), llmtest.Error(500, "boom")}, ""},
		{"connection reset", []llmtest.Turn{{Drop: true}, {Drop: true}, {Drop: true}}, ""},
		{"stream cut mid-way", []llmtest.Turn{{Events: []string{llmtest.TextDelta("partial ")}, Drop: true}}, "partial "},
		{"provider error mid-stream", []llmtest.Turn{llmtest.Stream(llmtest.TextDelta("half"), `{"error":{"message":"overloaded","code":"server_error"}}`)}, "half"},
		{"401 wrong key", []llmtest.Turn{llmtest.Error(401, "Authentication Fails")}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, append(tc.turns, textTurn("recovered")))
			ss := f.open(agent.Options{})
			res, runErr := ss.Run(context.Background(), "dangling")
			if runErr == nil || agent.IsConfigError(runErr) || !res.IsError {
				t.Fatalf("run: %+v %v", res, runErr)
			}
			_ = ss.Close(context.Background())
			list, err := agent.ListSessions(f.state)
			if err != nil || len(list) != 1 || list[0].ID != ss.ID() || list[0].Title != "dangling" || list[0].Turns != 1 {
				t.Fatalf("sessions = %+v %v", list, err)
			}
			ss = f.open(agent.Options{ID: ss.ID()})
			if _, err := ss.Run(context.Background(), "next"); err != nil {
				t.Fatal(err)
			}
			reqs := f.srv.Requests()
			// The failure is in the history as an assistant message (the
			// partial text, or a note): never two user messages in a row.
			h := f.wire(len(reqs) - 1).History()
			want := "user:dangling|assistant:[no reply: the model request failed: " + runErr.Error() + "]|user:next"
			if tc.partial != "" {
				want = "user:dangling|assistant:" + tc.partial + "|user:next"
			}
			if h != want {
				t.Fatalf("request history = %s, want %s", h, want)
			}
			recs, rerr := agent.ReadSession(context.Background(), f.svc.Sessions(), ss.ID())
			var failures []string
			for _, r := range recs {
				if r.Type == agent.RecordError {
					failures = append(failures, r.Code+"|"+r.Failure)
				}
			}
			if le, _ := llm.AsError(runErr); rerr != nil || len(failures) != 1 || failures[0] != string(le.Code)+"|"+runErr.Error() {
				t.Fatalf("error records = %q (%v), want the failure %v", failures, rerr, runErr)
			}
		})
	}
}

// A session that has kept nothing yet can be reopened by id in the same
// process (chat does after a reload restarts the agent); its file appears
// with the first kept turn.
func TestReopenUnwrittenSession(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []llmtest.Turn{textTurn("hello")})
	ss := f.open(agent.Options{})
	id := ss.ID()
	_ = ss.Close(context.Background())
	if names := f.sessionFiles(); len(names) != 0 {
		t.Fatalf("files before any turn: %v", names)
	}
	ss = f.open(agent.Options{ID: id})
	if _, err := ss.Run(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
	recs, err := agent.ReadJournal(ss.LogPath())
	if err != nil || len(recs) < 3 || recs[0].Type != agent.RecordSession || recs[0].ID != id || recs[0].Model != "test/m1" {
		t.Fatalf("log: %+v %v", recs, err)
	}
	if _, err := f.svc.Open(context.Background(), agent.Options{ID: "20990101T000000-deadbeef"}); !errors.Is(err, agent.ErrSessionNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
}

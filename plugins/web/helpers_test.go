package web_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness"
	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/plugins/web"
	"github.com/dshgo/harness/services/llm/llmtest"
	"go.uber.org/goleak"
)

// TestMain runs the tests, stops the browser they shared, then checks for
// leaked goroutines (as goleak.VerifyTestMain, which would check before the
// browser has stopped).
func TestMain(m *testing.M) {
	code := m.Run()
	stopChrome()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// testManifest is a full agent harness whose model is the scripted server
// at modelURL, with sessions and workspaces under state, the file tools in
// permission mode `mode`, and the web plugin on a free loopback port (extra
// goes on after the web row: its config, or more rows).
func testManifest(modelURL, state, mode, extra string) string {
	return harnesstest.AgentManifest(modelURL, fmt.Sprintf(`  - name: subprocess-local
    config: {sandbox: {mode: off}}
  - name: sessions-jsonl
    config: {stateDir: %s}
  - name: agent
    config: {model: test}
  - name: approval
    config: {answerer: headless}
  - name: permission
    config: {mode: %s}
  - name: tool-bash
  - name: tool-fs
  - name: workspaces
    config: {stateDir: %s}
  - name: web
%s`, state, mode, state, extra))
}

// env is one running web app with its scripted model.
type env struct {
	t     *testing.T
	h     *fxcore.Harness
	srv   *web.Server
	model *llmtest.Server
	// manifest is the harness.yml text the harness booted from.
	manifest string
	base     string
	http     *http.Client
}

func start(t *testing.T, turns []llmtest.Turn, mode string, opts ...harness.Option) *env {
	t.Helper()
	return startWith(t, turns, func(modelURL, state string) string { return testManifest(modelURL, state, mode, "") }, opts...)
}

// startWith is start with the manifest text manifest(modelURL, stateDir)
// (kept in env.manifest).
func startWith(t *testing.T, turns []llmtest.Turn, manifest func(modelURL, state string) string, opts ...harness.Option) *env {
	t.Helper()
	return startModel(t, llmtest.New(t, turns), manifest, opts...)
}

// startModel is startWith with the scripted model server given.
func startModel(t *testing.T, model *llmtest.Server, manifest func(modelURL, state string) string, opts ...harness.Option) *env {
	t.Helper()
	state := t.TempDir()
	text := manifest(model.URL, state)
	h := harnesstest.Start(t, text, opts...)
	srv := harnesstest.Service(t, h, web.Key)
	return &env{t: t, h: h, srv: srv, model: model, manifest: text, base: srv.BaseURL(), http: &http.Client{
		Timeout:       patience,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// req sends an authorized same-origin request and returns status and body.
func (e *env) req(method, path string, body any) (int, []byte) {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	r, _ := http.NewRequest(method, e.base+path, rd)
	r.Header.Set("Authorization", "Bearer "+e.srv.Token())
	if method != http.MethodGet {
		r.Header.Set("Origin", e.base)
	}
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	resp, err := e.http.Do(r)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// must sends a request that must answer want, decoding the body into out.
func (e *env) must(want int, method, path string, body, out any) {
	e.t.Helper()
	code, b := e.req(method, path, body)
	if code != want {
		e.t.Fatalf("%s %s: %d %s, want %d", method, path, code, b, want)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			e.t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
}

type workspace struct {
	ID, Path, Title string
	Sessions        []string
}

func (e *env) workspace(dir string) workspace {
	var w workspace
	e.must(http.StatusCreated, "POST", "/api/workspaces", map[string]string{"path": dir}, &w)
	return w
}

func (e *env) newSession(ws workspace) string {
	var s struct{ ID string }
	e.must(http.StatusCreated, "POST", "/api/workspaces/"+ws.ID+"/sessions", nil, &s)
	return s.ID
}

// event is a decoded SSE event (agent events and the web app's own).
type event struct {
	ID         string
	Type       string                                `json:"type"`
	Text       string                                `json:"text"`
	Source     string                                `json:"source"`
	ToolCall   *struct{ ID, Name, Arguments string } `json:"toolCall"`
	ToolResult *struct {
		CallID  string `json:"callId"`
		Content string `json:"content"`
		IsError bool   `json:"isError"`
	} `json:"toolResult"`
	ToolProgress *struct {
		CallID string `json:"callId"`
		Tail   string `json:"tail"`
	} `json:"toolProgress"`
	Result *struct {
		Reason  string `json:"reason"`
		IsError bool   `json:"isError"`
	} `json:"result"`
	Approval *struct {
		ID, Tool, Arguments, Reason, Always string
		AlwaysRules                         []string `json:"alwaysRules"`
	} `json:"approval"`
	Message *struct {
		Content string `json:"content"`
	} `json:"message"`
	Subagent *struct {
		ID, Parent, Agent, Description, State, Text string
		Usage                                       *struct{ TotalTokens int64 }
	} `json:"subagent"`
	Answer string   `json:"answer"`
	Reason string   `json:"reason"`
	Queue  []string `json:"queue"`
	Busy   bool     `json:"busy"`
}

// stream is an open SSE connection.
type stream struct {
	t      *testing.T
	cancel context.CancelFunc
	events chan event
	seen   []event
}

func (e *env) stream(ws workspace, id, lastID string) *stream {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r, _ := http.NewRequestWithContext(ctx, "GET", e.base+"/api/workspaces/"+ws.ID+"/sessions/"+id+"/events", nil)
	r.Header.Set("Authorization", "Bearer "+e.srv.Token())
	if lastID != "" {
		r.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		cancel()
		e.t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		e.t.Fatalf("events: %d %s", resp.StatusCode, b)
	}
	s := &stream{t: e.t, cancel: cancel, events: make(chan event, 4096)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(s.events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		var id string
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "id: "); ok {
				id = v
			}
			if v, ok := strings.CutPrefix(line, "data: "); ok {
				var ev event
				if err := json.Unmarshal([]byte(v), &ev); err != nil {
					e.t.Errorf("bad event %q: %v", v, err)
					continue
				}
				ev.ID = id
				s.events <- ev
			}
		}
	}()
	e.t.Cleanup(func() { cancel(); <-done })
	return s
}

// patience bounds every wait of these tests (an event, a closed session,
// a browser step). It only decides when a stuck test fails: a passing test
// never waits for it, so it is generous for a loaded machine running the
// tests in parallel under -race.
const patience = 90 * time.Second

// until reads events until one satisfies ok (failing after patience).
func (s *stream) until(what string, ok func(event) bool) event {
	s.t.Helper()
	timeout := time.After(patience)
	for {
		select {
		case ev, open := <-s.events:
			if !open {
				s.t.Fatalf("stream closed waiting for %s; seen %v", what, types(s.seen))
			}
			s.seen = append(s.seen, ev)
			if ev.ToolResult != nil && testing.Verbose() {
				s.t.Logf("tool result: %s", ev.ToolResult.Content)
			}
			if ok(ev) {
				return ev
			}
		case <-timeout:
			s.t.Fatalf("no %s after %v; seen %v", what, patience, types(s.seen))
		}
	}
}

func types(evs []event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func isType(t string) func(event) bool { return func(e event) bool { return e.Type == t } }

func q(s string) string { return url.QueryEscape(s) }

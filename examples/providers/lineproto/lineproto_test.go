package lineproto_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"example.com/providers/lineproto"
	"github.com/dshgo/harness"
	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// server is a local line-protocol server: each request is answered by the
// next handler of the script, and its body is recorded.
type server struct {
	*httptest.Server
	mu     sync.Mutex
	script []http.HandlerFunc
	reqs   []lineproto.WireRequest
}

func newServer(t *testing.T, script ...http.HandlerFunc) *server {
	s := &server{script: script}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req lineproto.WireRequest
		if r.URL.Path != "/generate" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.reqs = append(s.reqs, req)
		var h http.HandlerFunc
		if len(s.script) > 0 {
			h, s.script = s.script[0], s.script[1:]
		}
		s.mu.Unlock()
		if h == nil {
			http.Error(w, "script exhausted", http.StatusInternalServerError)
			return
		}
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) requests() []lineproto.WireRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]lineproto.WireRequest(nil), s.reqs...)
}

// lines answers with the given NDJSON lines, flushing each.
func lines(ls ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		for _, l := range ls {
			fmt.Fprintln(w, l)
			w.(http.Flusher).Flush()
		}
	}
}

func status(code int, header, value, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if header != "" {
			w.Header().Set(header, value)
		}
		w.WriteHeader(code)
		fmt.Fprint(w, body)
	}
}

func adapter(url string) *lineproto.Adapter {
	return lineproto.New(lineproto.Config{Provider: "lp", BaseURL: url, APIKey: "sk-lineproto-secret", Models: []string{"m1"},
		Timeout: manifest.Duration(time.Minute)}, http.DefaultClient)
}

func request() llm.Request {
	return llm.Request{Model: "m1", Messages: []llm.Message{{Role: llm.RoleSystem, Content: "sys"}, {Role: llm.RoleUser, Content: "hi"}}}
}

// describe renders the chunks of a stream as one line each.
func describe(s llm.Stream) []string {
	var out []string
	for c := range s {
		switch c.Kind {
		case llm.ChunkText, llm.ChunkToolCallDelta:
			out = append(out, fmt.Sprintf("%s %d %q", c.Kind, c.Index, c.Text))
		case llm.ChunkToolCallStart:
			out = append(out, fmt.Sprintf("%s %d %s %s", c.Kind, c.Index, c.ToolCallID, c.ToolName))
		case llm.ChunkToolCallEnd:
			out = append(out, fmt.Sprintf("%s %d", c.Kind, c.Index))
		case llm.ChunkUsage:
			out = append(out, fmt.Sprintf("usage %d+%d", c.Usage.PromptTokens, c.Usage.CompletionTokens))
		case llm.ChunkFinish:
			code := llm.Code("")
			if c.Err != nil {
				code = c.Err.Code
			}
			out = append(out, fmt.Sprintf("finish %s %s", c.Finish, code))
		}
	}
	return out
}

// The adapter's obligations: provider slots become indices 0, 1 in
// first-seen order and argument fragments follow their slot; every call
// ends, in index order, after all content; the last usage report comes
// once, right before the one finish.
func TestStreamKeepsTheAdapterContract(t *testing.T) {
	srv := newServer(t, lines(
		`{"t":"text","text":"Count"}`,
		`{"t":"call","slot":7,"id":"c1","name":"word_count"}`,
		`{"t":"usage","in":10,"out":1}`,
		`{"t":"call","slot":2,"id":"c2","name":"word_count"}`,
		`{"t":"args","slot":7,"part":"{\"text\":"}`,
		`{"t":"args","slot":2,"part":"{\"text\":\"b\"}"}`,
		`{"t":"args","slot":7,"part":"\"a\"}"}`,
		`{"t":"future_event","x":1}`,
		`{"t":"usage","in":10,"out":9}`,
		`{"t":"end","why":"tools"}`,
	))
	got := describe(adapter(srv.URL).Stream(context.Background(), request()))
	want := []string{
		`text 0 "Count"`,
		"tool-call-start 0 c1 word_count",
		"tool-call-start 1 c2 word_count",
		`tool-call-delta 0 "{\"text\":"`,
		`tool-call-delta 1 "{\"text\":\"b\"}"`,
		`tool-call-delta 0 "\"a\"}"`,
		"tool-call-end 0",
		"tool-call-end 1",
		"usage 10+9",
		"finish tool_calls ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("chunks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	r := llm.Collect(adapter(srv.URL).Stream(context.Background(), request()))
	if r.Err == nil || r.Err.Code != llm.CodeServer { // the script is exhausted: HTTP 500
		t.Fatalf("second request: %+v", r.Err)
	}
	if reqs := srv.requests(); reqs[0].System != "sys" || len(reqs[0].Turns) != 1 || reqs[0].Turns[0].Text != "hi" {
		t.Fatalf("wire request %+v", reqs[0])
	}
}

// Every failure ends the stream with exactly one finish whose error has a
// stable code; the API key never appears in a message.
func TestFailuresHaveStableCodes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		h     http.HandlerFunc
		code  llm.Code
		check func(*llm.Error) error
	}{
		{"401", status(401, "", "", "invalid key"), llm.CodeAuth, nil},
		{"429 with Retry-After", status(429, "Retry-After", "3", "slow down"), llm.CodeRateLimit, func(e *llm.Error) error {
			if e.RetryAfter != 3*time.Second {
				return fmt.Errorf("RetryAfter %v", e.RetryAfter)
			}
			return nil
		}},
		{"503", status(503, "", "", "down"), llm.CodeServer, nil},
		{"400", status(400, "", "", "no such model"), llm.CodeProtocol, nil},
		{"in-stream error", lines(`{"t":"text","text":"x"}`, `{"t":"error","kind":"overloaded","message":"busy"}`), llm.CodeServer, nil},
		{"no end event", lines(`{"t":"text","text":"x"}`), llm.CodeNetwork, nil},
		{"a line that is not JSON", lines(`{"t":"text"`), llm.CodeProtocol, nil},
		{"arguments for a call never started", lines(`{"t":"args","slot":1,"part":"{}"}`), llm.CodeProtocol, nil},
		{"a line longer than MaxLineBytes", lines(`{"t":"text","text":"` + strings.Repeat("x", lineproto.MaxLineBytes) + `"}`), llm.CodeProtocol, nil},
		{"unknown end reason", lines(`{"t":"end","why":"bored"}`), llm.CodeProtocol, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, tc.h)
			var finishes []llm.Chunk
			var last llm.Chunk
			for c := range adapter(srv.URL).Stream(context.Background(), request()) {
				if c.Kind == llm.ChunkFinish {
					finishes = append(finishes, c)
				}
				last = c
			}
			if len(finishes) != 1 || last.Kind != llm.ChunkFinish || last.Finish != llm.FinishError || last.Err == nil {
				t.Fatalf("finishes %+v, last %+v", finishes, last)
			}
			if last.Err.Code != tc.code {
				t.Fatalf("code %s (%v), want %s", last.Err.Code, last.Err, tc.code)
			}
			if strings.Contains(last.Err.Error(), "sk-lineproto-secret") {
				t.Fatalf("the error shows the API key: %v", last.Err)
			}
			if tc.check != nil {
				if err := tc.check(last.Err); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// Cancelling the caller's context ends the stream with an aborted finish;
// the server sees the request go away.
func TestCancelEndsTheStreamAborted(t *testing.T) {
	gone := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		lines(`{"t":"text","text":"first"}`)(w, r)
		<-r.Context().Done()
		close(gone)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []string
	for c := range adapter(srv.URL).Stream(ctx, request()) {
		got = append(got, c.Kind.String())
		if c.Kind == llm.ChunkText {
			cancel()
		}
		if c.Kind == llm.ChunkFinish && (c.Finish != llm.FinishAborted || c.Err.Code != llm.CodeAborted) {
			t.Fatalf("finish %s %v", c.Finish, c.Err)
		}
	}
	if strings.Join(got, " ") != "text finish" {
		t.Fatalf("chunks %v", got)
	}
	<-gone
}

// The adapter mounted from a manifest serves an agent run: the scripted
// server calls a tool, and its second request carries the result.
func TestAgentRunThroughTheAdapter(t *testing.T) {
	srv := newServer(t,
		lines(`{"t":"call","slot":1,"id":"call_1","name":"shout"}`, `{"t":"args","slot":1,"part":"{\"text\":\"hi\"}"}`,
			`{"t":"usage","in":20,"out":5}`, `{"t":"end","why":"tools"}`),
		lines(`{"t":"text","text":"It says HI."}`, `{"t":"end","why":"done"}`))
	type shoutArgs struct {
		Text string `json:"text"`
	}
	shout := tools.NewPlugin("tool-shout", tools.Define("shout", "Upper-case a text.",
		func(_ context.Context, _ *tools.Execution, a shoutArgs) (string, error) {
			return strings.ToUpper(a.Text), nil
		}))
	h := harnesstest.Start(t, fmt.Sprintf(`plugins:
  - {id: prompt, name: systemprompt}
  - {id: tools, name: tools}
  - {id: prompt-tools, name: prompt-tools}
  - {id: shout, name: tool-shout}
  - {id: llm, name: llm}
  - {id: lp, name: llm-lineproto, config: {provider: lp, baseURL: %q, models: [m1]}}
  - {id: sessions, name: sessions-jsonl, config: {stateDir: %q}}
  - {id: agent, name: agent, config: {model: lp}}
`, srv.URL, t.TempDir()), harness.WithPlugins(shout))
	ctx := context.Background()
	ss, err := harnesstest.Service(t, h, agent.Key).Open(ctx, agent.Options{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close(ctx)
	res, err := ss.Run(ctx, "shout hi")
	if err != nil || res.Text != "It says HI." || res.Usage.PromptTokens != 20 {
		t.Fatalf("run: %v %+v", err, res)
	}
	reqs := srv.requests()
	if len(reqs) != 2 || len(reqs[0].Tools) != 1 || reqs[0].Tools[0].Name != "shout" {
		t.Fatalf("requests %+v", reqs)
	}
	last := reqs[1].Turns[len(reqs[1].Turns)-1]
	if last.Role != "tool" || last.Call != "call_1" || last.Text != "HI" {
		t.Fatalf("second request ends with %+v", last)
	}
}

// Package llmtest is a scripted model: an httptest server that speaks the
// OpenAI chat-completions streaming protocol (server-sent events) from a
// script of turns, and records every request for assertions.
//
// Each POST to /chat/completions (under any prefix, so base URLs ending in /v1
// work) consumes the next [Turn]:
//
//   - a Turn with Status ≥ 400 answers with that status, its Header (e.g.
//     Retry-After) and ErrorBody (an OpenAI-style {"error":{...}} JSON body);
//   - otherwise the server writes `data: <event>` for every entry of Events,
//     flushing after each, then `data: [DONE]` unless OmitDone is set;
//   - with Drop set, the connection is cut after the events, without [DONE]
//     and without terminating the chunked body (a dropped connection; with
//     no events it is a connection reset before any output).
//
// An event made by [KeepAlive] or [Bytes] is written as it is, without the
// `data:` framing (SSE comments, partial lines, anything a real provider or
// proxy sends). [Turn.Generate] produces events lazily, for streams too large
// to hold (a 50 MB argument) or endless ones.
//
// A [Check] installed with [WithCheck] runs before the script and may answer
// a request itself (see [DeepSeekReasoningCheck], which reproduces DeepSeek's
// HTTP 400 when reasoning_content is missing). When the script is exhausted
// the server answers 500 with a message saying so; [Server.Remaining] tells
// how many turns are left.
//
// The event builders (TextDelta, ReasoningDelta, ToolCallStart, ...) produce
// the exact JSON that DeepSeek and OpenAI send; [Raw] sends anything. Their
// chunks name the model "llmtest", not the one requested, as a provider
// that answers with a dated snapshot does; [Turn.WithModel] names another
// (or none).
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Turn is the scripted answer to one request.
type Turn struct {
	// Events are the `data:` payloads, one SSE event each.
	Events []string
	// OmitDone leaves out the final `data: [DONE]`.
	OmitDone bool
	// Drop cuts the connection after Events (no [DONE], no body terminator).
	Drop bool
	// Delay pauses before each event (a model producing tokens over time);
	// the pause ends early when the client goes away.
	Delay time.Duration
	// Stall keeps the connection open and silent after Events until the
	// client goes away or the server closes (an endpoint that hangs).
	Stall bool
	// Status, when ≥ 400, makes the turn an HTTP error response.
	Status int
	// ErrorBody is the body of an error response; empty means
	// {"error":{"message":"scripted error","type":"api_error"}}.
	ErrorBody string
	// Header is added to the response (error or stream).
	Header http.Header
	// Generate, when set, produces more events after Events, one at a time
	// as they are written (nothing is held): it is called once and stops when
	// yield returns false (the client went away or the server closed).
	// Delay applies to these events too.
	Generate func(yield func(event string) bool)
}

// Error returns an error turn with an OpenAI-style body carrying message.
func Error(status int, message string) Turn {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": message, "type": errorType(status), "param": nil, "code": nil,
	}})
	return Turn{Status: status, ErrorBody: string(b)}
}

// RetryAfter returns t with a Retry-After header of the given value
// ("1", or an HTTP date).
func (t Turn) RetryAfter(value string) Turn {
	h := t.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set("Retry-After", value)
	t.Header = h
	return t
}

func errorType(status int) string {
	switch {
	case status == 401:
		return "authentication_error"
	case status == 429:
		return "rate_limit_error"
	case status >= 500:
		return "api_error"
	}
	return "invalid_request_error"
}

// Stream returns a turn that streams events and then [DONE].
func Stream(events ...string) Turn { return Turn{Events: events} }

// Request is one recorded request.
type Request struct {
	Method string
	Path   string
	Header http.Header
	// Body is the raw request body.
	Body []byte
}

// Wire decodes Body as a chat-completions request.
func (r Request) Wire() (WireRequest, error) {
	var w WireRequest
	err := json.Unmarshal(r.Body, &w)
	return w, err
}

// WireRequest is the part of a chat-completions request body tests assert on.
type WireRequest struct {
	Model           string          `json:"model"`
	Messages        []WireMessage   `json:"messages"`
	Tools           []WireTool      `json:"tools"`
	Stream          bool            `json:"stream"`
	StreamOptions   json.RawMessage `json:"stream_options"`
	MaxTokens       *int64          `json:"max_tokens"`
	Thinking        *WireThinking   `json:"thinking"`
	ReasoningEffort string          `json:"reasoning_effort"`
}

// WireThinking is DeepSeek's `thinking` request field.
type WireThinking struct {
	Type string `json:"type"`
}

// WireMessage is one request message. Content keeps its raw JSON (a string,
// null, or an array of parts); ReasoningContent is nil when absent.
type WireMessage struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	ReasoningContent *string         `json:"reasoning_content"`
	ToolCalls        []WireToolCall  `json:"tool_calls"`
	ToolCallID       string          `json:"tool_call_id"`
}

// History renders the conversation of the request after its system
// message as "role:text" entries joined by "|" ("user:one|assistant:first|
// user:two"), for asserting what a resumed session sent.
func (w WireRequest) History() string {
	var got []string
	for _, m := range w.Messages {
		if m.Role != "system" {
			got = append(got, m.Role+":"+m.Text())
		}
	}
	return strings.Join(got, "|")
}

// Text returns Content as a string ("" for null or absent; parts joined).
func (m WireMessage) Text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(m.Content, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

// WireToolCall is one tool call of an assistant request message.
type WireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// WireTool is one tool schema of a request.
type WireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// Check inspects a request before the script answers it. Returning a turn
// answers the request with it (the script does not advance); nil lets the
// script answer.
type Check func(r Request, w WireRequest) *Turn

// Option configures a [Server]. The interface is sealed: the options are
// the With* functions of this package.
type Option interface{ applyServer(*Server) }

type optionFunc func(*Server)

func (f optionFunc) applyServer(s *Server) { f(s) }

// WithCheck installs a request check (see [Check]).
func WithCheck(c Check) Option {
	return optionFunc(func(s *Server) { s.checks = append(s.checks, c) })
}

// DeepSeekReasoningCheck answers HTTP 400 with DeepSeek's error text when an
// assistant message that has tool_calls lacks reasoning_content, as DeepSeek
// does in thinking mode (bug case B14).
func DeepSeekReasoningCheck(_ Request, w WireRequest) *Turn {
	for i, m := range w.Messages {
		if m.Role == "assistant" && len(m.ToolCalls) > 0 && m.ReasoningContent == nil {
			t := Error(http.StatusBadRequest, fmt.Sprintf(
				"Missing `reasoning_content` field in the assistant message at message index %d. "+
					"For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls", i))
			return &t
		}
	}
	return nil
}

// Server is a running scripted model. Create it with [New].
type Server struct {
	// URL is the base URL to configure as baseURL (it ends in /v1).
	URL string

	srv    *httptest.Server
	checks []Check
	closed chan struct{}
	once   sync.Once

	mu       sync.Mutex
	turns    []Turn
	requests []Request
}

// New starts a server answering with turns in order and closes it when the
// test ends.
func New(t testing.TB, turns []Turn, opts ...Option) *Server {
	t.Helper()
	s := NewServer(turns, opts...)
	t.Cleanup(s.Close)
	return s
}

// NewServer starts a server outside a test (examples, benchmarks, tools);
// the caller must Close it.
func NewServer(turns []Turn, opts ...Option) *Server {
	s := &Server{turns: turns, closed: make(chan struct{})}
	for _, o := range opts {
		o.applyServer(s)
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/v1"
	return s
}

// Close stops the server and closes client connections; it is idempotent.
func (s *Server) Close() {
	s.once.Do(func() { close(s.closed) })
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Enqueue appends turns to the script.
func (s *Server) Enqueue(turns ...Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns = append(s.turns, turns...)
}

// Requests returns a copy of the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	copy(out, s.requests)
	return out
}

// Remaining is the number of unused turns.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.turns)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	n := len(s.requests)
	s.mu.Unlock()

	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		s.writeTurn(w, r, Error(http.StatusNotFound, fmt.Sprintf("llmtest: no route %s %s", r.Method, r.URL.Path)))
		return
	}
	// Without checks, a syntax check is enough (decoding a long history
	// costs the server more than the client spends on its step).
	var wire WireRequest
	var err error
	if len(s.checks) > 0 || !json.Valid(body) {
		wire, err = req.Wire()
	}
	if err != nil {
		s.writeTurn(w, r, Error(http.StatusBadRequest, "llmtest: request body is not JSON: "+err.Error()))
		return
	}
	for _, c := range s.checks {
		if t := c(req, wire); t != nil {
			s.writeTurn(w, r, *t)
			return
		}
	}
	s.mu.Lock()
	if len(s.turns) == 0 {
		s.mu.Unlock()
		s.writeTurn(w, r, Error(http.StatusInternalServerError, fmt.Sprintf("llmtest: no scripted turn left for request %d", n)))
		return
	}
	t := s.turns[0]
	s.turns = s.turns[1:]
	s.mu.Unlock()
	s.writeTurn(w, r, t)
}

func (s *Server) writeTurn(w http.ResponseWriter, r *http.Request, t Turn) {
	for k, vs := range t.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	if t.Status >= 400 {
		body := t.ErrorBody
		if body == "" {
			body = `{"error":{"message":"scripted error","type":"api_error"}}`
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(t.Status)
		_, _ = io.WriteString(w, body)
		return
	}
	flusher, _ := w.(http.Flusher)
	if t.Drop && len(t.Events) == 0 {
		hijackAndClose(w)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	write := func(e string) bool {
		if t.Delay > 0 {
			timer := time.NewTimer(t.Delay)
			select {
			case <-timer.C:
			case <-r.Context().Done():
				timer.Stop()
				return false
			case <-s.closed:
				timer.Stop()
				return false
			}
		}
		var err error
		if raw, ok := strings.CutPrefix(e, rawPrefix); ok {
			_, err = io.WriteString(w, raw)
		} else {
			_, err = fmt.Fprintf(w, "data: %s\n\n", e)
		}
		if err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		select {
		case <-s.closed:
			return false
		default:
			return r.Context().Err() == nil
		}
	}
	for _, e := range t.Events {
		if !write(e) {
			return
		}
	}
	if t.Generate != nil {
		ok := true
		t.Generate(func(e string) bool {
			ok = ok && write(e)
			return ok
		})
		if !ok {
			return
		}
	}
	if t.Drop {
		hijackAndClose(w)
		return
	}
	if t.Stall {
		select {
		case <-r.Context().Done():
		case <-s.closed:
		}
		return
	}
	if !t.OmitDone {
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}
}

// hijackAndClose cuts the connection: what was written is flushed first,
// then the socket closes without the chunked-body terminator.
func hijackAndClose(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("llmtest: response writer cannot be hijacked")
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	_ = conn.Close()
}

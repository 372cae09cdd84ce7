// Package lineproto is a second LLM adapter, for a deliberately small
// non-OpenAI wire format, written the way a third-party provider adapter is
// written. It shows what every adapter owes the agent (package
// services/llm, "Guarantees of a Stream"):
//
//   - tool calls get stable indices 0, 1, … in first-seen order, whatever
//     the provider numbers them; argument fragments are routed by the
//     provider's number, never appended to "the last call";
//   - every started call gets a ChunkToolCallEnd, in index order, after all
//     content;
//   - usage is the provider's last report, sent once, right before the
//     finish (never a sum, never 0 when the provider said nothing);
//   - exactly one ChunkFinish ends every stream, and failures carry an
//     *llm.Error with a stable Code (AUTH, RATE_LIMIT, SERVER, NETWORK,
//     PROTOCOL, ABORTED) that callers route on, never the message text;
//   - memory stays bounded whatever the server sends (lines and bodies are
//     capped), and no goroutine outlives the stream.
//
// The wire format: POST {baseURL}/generate with a JSON [WireRequest]; the
// response is application/x-ndjson, one [WireEvent] per line:
//
//	{"t":"text","text":"Hel"}
//	{"t":"call","slot":7,"id":"c1","name":"word_count"}
//	{"t":"args","slot":7,"part":"{\"text\":"}
//	{"t":"usage","in":120,"out":9}
//	{"t":"end","why":"tools"}            // done | tools | max_tokens
//	{"t":"error","kind":"overloaded","message":"try later"}
package lineproto

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/services/llm"
)

// MaxLineBytes bounds one NDJSON line; a longer line fails the stream with
// CodeProtocol instead of growing a buffer without limit.
const MaxLineBytes = 1 << 20

// maxErrorBody bounds how much of an HTTP error body is read.
const maxErrorBody = 64 << 10

// WireRequest is the request body.
type WireRequest struct {
	Model  string     `json:"model"`
	System string     `json:"system,omitempty"`
	Turns  []WireTurn `json:"turns"`
	Tools  []WireTool `json:"tools,omitempty"`
}

// WireTurn is one conversation entry: role user, assistant or tool.
type WireTurn struct {
	Role  string     `json:"role"`
	Text  string     `json:"text,omitempty"`
	Calls []WireCall `json:"calls,omitempty"` // assistant
	Call  string     `json:"call,omitempty"`  // tool: the id of the call answered
}

// WireCall is one tool call of an assistant turn.
type WireCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// WireTool is one tool offered to the model.
type WireTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema,omitempty"`
}

// WireEvent is one line of the response stream.
type WireEvent struct {
	T       string `json:"t"`
	Text    string `json:"text,omitempty"`
	Slot    int    `json:"slot,omitempty"`
	ID      string `json:"id,omitempty"`
	Name    string `json:"name,omitempty"`
	Part    string `json:"part,omitempty"`
	In      int64  `json:"in,omitempty"`
	Out     int64  `json:"out,omitempty"`
	Why     string `json:"why,omitempty"`
	Kind    string `json:"kind,omitempty"`
	Message string `json:"message,omitempty"`
}

// Config is the harness.yml config of a `name: llm-lineproto` row.
type Config struct {
	Provider string            `yaml:"provider" jsonschema:"description=Route name: requests name provider/model"`
	BaseURL  string            `yaml:"baseURL" jsonschema:"description=Server URL; requests go to BASEURL/generate"`
	APIKey   string            `yaml:"apiKey" harness:"secret" jsonschema:"description=Bearer token (secret); write !env VAR"`
	Models   []string          `yaml:"models" jsonschema:"description=Model names; the first is the default"`
	Timeout  manifest.Duration `yaml:"timeout" jsonschema:"description=Whole-request timeout"`
}

// SetDefaults sets a 2-minute timeout.
func (c *Config) SetDefaults() { c.Timeout = manifest.Duration(2 * time.Minute) }

// Validate checks the fields that a request needs.
func (c Config) Validate() error {
	var errs []error
	if c.Provider == "" {
		errs = append(errs, errors.New("provider: required"))
	}
	if !strings.HasPrefix(c.BaseURL, "http://") && !strings.HasPrefix(c.BaseURL, "https://") {
		errs = append(errs, errors.New("baseURL: must be an http(s) URL"))
	}
	if len(c.Models) == 0 {
		errs = append(errs, errors.New("models: list at least one model"))
	}
	if c.Timeout <= 0 {
		errs = append(errs, errors.New("timeout: must be positive"))
	}
	return errors.Join(errs...)
}

// Plugin registers the adapter as the route cfg.Provider, as an effect of
// its fiber (the route goes when the row is unmounted).
var Plugin = core.Define("llm-lineproto", func(c *core.Context, cfg Config) error {
	return llm.Register(c, New(cfg, http.DefaultClient))
}, core.WithInject(llm.Key.Name()), core.WithDescription("LLM adapter for the line protocol example"))

func init() { core.Register(Plugin) }

// Adapter implements llm.Adapter for the line protocol.
type Adapter struct {
	cfg     Config
	client  *http.Client
	timeout time.Duration
}

// New returns an adapter for a validated cfg using client.
func New(cfg Config, client *http.Client) *Adapter {
	return &Adapter{cfg: cfg, client: client, timeout: cfg.Timeout.D()}
}

// Provider returns the route name.
func (a *Adapter) Provider() string { return a.cfg.Provider }

// Models lists the configured models; the first is the default.
func (a *Adapter) Models() []llm.Model {
	out := make([]llm.Model, len(a.cfg.Models))
	for i, name := range a.cfg.Models {
		out[i] = llm.Model{Provider: a.cfg.Provider, Name: name, Default: i == 0}
	}
	return out
}

// Stream performs req. Ranging over the result makes the request on the
// caller's goroutine; it ends with exactly one finish chunk.
func (a *Adapter) Stream(ctx context.Context, req llm.Request) llm.Stream {
	return func(yield func(llm.Chunk) bool) {
		ctx, cancel := context.WithTimeout(ctx, a.timeout)
		defer cancel() // breaking out of the loop cancels the request
		s := &stream{yield: yield, slots: map[int]int{}}
		s.finish(a.run(ctx, req, s))
	}
}

// stream is the state of one response: the provider's slots mapped to
// stable indices, the last usage report, and whether the consumer stopped.
type stream struct {
	yield   func(llm.Chunk) bool
	stopped bool
	slots   map[int]int // provider slot → index
	calls   int
	usage   *llm.Usage
	why     llm.FinishReason
}

func (s *stream) emit(c llm.Chunk) bool {
	if !s.stopped && !s.yield(c) {
		s.stopped = true
	}
	return !s.stopped
}

// finish closes every started call in index order, then sends the usage
// and the one finish chunk (with err's code when the stream failed).
func (s *stream) finish(err *llm.Error) {
	for i := range s.calls {
		s.emit(llm.Chunk{Kind: llm.ChunkToolCallEnd, Index: i})
	}
	if s.usage != nil {
		s.emit(llm.Chunk{Kind: llm.ChunkUsage, Usage: s.usage})
	}
	switch {
	case err != nil && err.Code == llm.CodeAborted:
		s.emit(llm.Chunk{Kind: llm.ChunkFinish, Finish: llm.FinishAborted, Err: err})
	case err != nil:
		s.emit(llm.Chunk{Kind: llm.ChunkFinish, Finish: llm.FinishError, Err: err})
	default:
		s.emit(llm.Chunk{Kind: llm.ChunkFinish, Finish: s.why})
	}
}

// run sends the request and translates the response; nil means the
// provider ended the stream normally (s.why is set).
func (a *Adapter) run(ctx context.Context, req llm.Request, s *stream) *llm.Error {
	body, err := json.Marshal(toWire(req))
	if err != nil {
		return &llm.Error{Code: llm.CodeProtocol, Message: "encoding the request: " + err.Error(), Err: err}
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(a.cfg.BaseURL, "/")+"/generate", bytes.NewReader(body))
	if err != nil {
		return &llm.Error{Code: llm.CodeProtocol, Message: err.Error(), Err: err}
	}
	hreq.Header.Set("Content-Type", "application/json")
	if a.cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+a.cfg.APIKey)
	}
	resp, err := a.client.Do(hreq)
	if err != nil {
		return transportError(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return statusError(resp)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var ev WireEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			return &llm.Error{Code: llm.CodeProtocol, Message: fmt.Sprintf("bad event line %.80q: %v", line, err), Err: err}
		}
		done, lerr := s.event(ev)
		if lerr != nil || done || s.stopped {
			return lerr
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return &llm.Error{Code: llm.CodeProtocol, Message: fmt.Sprintf("an event line exceeds %d bytes", MaxLineBytes), Err: err}
		}
		return transportError(ctx, err)
	}
	if ctx.Err() != nil {
		return transportError(ctx, ctx.Err())
	}
	return &llm.Error{Code: llm.CodeNetwork, Message: "the stream ended without an end event"}
}

// event translates one wire event. done is true after "end".
func (s *stream) event(ev WireEvent) (done bool, err *llm.Error) {
	switch ev.T {
	case "text":
		s.emit(llm.Chunk{Kind: llm.ChunkText, Text: ev.Text})
	case "call":
		if _, dup := s.slots[ev.Slot]; dup {
			return false, llm.Errorf(llm.CodeProtocol, "tool call slot %d started twice", ev.Slot)
		}
		s.slots[ev.Slot] = s.calls
		s.emit(llm.Chunk{Kind: llm.ChunkToolCallStart, Index: s.calls, ToolCallID: ev.ID, ToolName: ev.Name})
		s.calls++
	case "args":
		i, ok := s.slots[ev.Slot]
		if !ok {
			return false, llm.Errorf(llm.CodeProtocol, "arguments for tool call slot %d, which was never started", ev.Slot)
		}
		s.emit(llm.Chunk{Kind: llm.ChunkToolCallDelta, Index: i, Text: ev.Part})
	case "usage":
		// The last report wins: providers repeat cumulative counts.
		s.usage = &llm.Usage{PromptTokens: ev.In, CompletionTokens: ev.Out, TotalTokens: ev.In + ev.Out}
	case "end":
		switch ev.Why {
		case "done":
			s.why = llm.FinishStop
		case "tools":
			s.why = llm.FinishToolCalls
		case "max_tokens":
			s.why = llm.FinishLength
		default:
			return true, llm.Errorf(llm.CodeProtocol, "unknown end reason %q", ev.Why)
		}
		return true, nil
	case "error":
		code := llm.CodeServer
		if ev.Kind == "bad_request" {
			code = llm.CodeProtocol
		}
		return true, llm.Errorf(code, "provider error %s: %s", ev.Kind, ev.Message)
	default:
		// Unknown event types are skipped: providers add new ones.
	}
	return false, nil
}

// statusError maps an HTTP status to a stable code, with a bounded read of
// the provider's message.
func statusError(resp *http.Response) *llm.Error {
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &llm.Error{Status: resp.StatusCode, Message: strings.TrimSpace(string(msg))}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		e.Code = llm.CodeAuth
	case resp.StatusCode == http.StatusTooManyRequests:
		e.Code = llm.CodeRateLimit
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
			e.RetryAfter = time.Duration(secs) * time.Second
		}
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusRequestTimeout:
		e.Code = llm.CodeServer
	default:
		e.Code = llm.CodeProtocol
	}
	return e
}

// transportError is CodeAborted when the caller cancelled, else CodeNetwork.
func transportError(ctx context.Context, err error) *llm.Error {
	if ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled) {
		return llm.Aborted(ctx)
	}
	return &llm.Error{Code: llm.CodeNetwork, Message: err.Error(), Err: err}
}

// toWire translates the provider-neutral request.
func toWire(req llm.Request) WireRequest {
	w := WireRequest{Model: req.Model}
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleSystem:
			w.System += m.Content
		case llm.RoleUser:
			w.Turns = append(w.Turns, WireTurn{Role: "user", Text: m.Content})
		case llm.RoleAssistant:
			t := WireTurn{Role: "assistant", Text: m.Content}
			for _, c := range m.ToolCalls {
				in := json.RawMessage(c.Arguments)
				if !json.Valid(in) { // a truncated call stays in history verbatim, as a string
					in, _ = json.Marshal(c.Arguments)
				}
				t.Calls = append(t.Calls, WireCall{ID: c.ID, Name: c.Name, Input: in})
			}
			w.Turns = append(w.Turns, t)
		case llm.RoleTool:
			w.Turns = append(w.Turns, WireTurn{Role: "tool", Call: m.ToolCallID, Text: m.Content})
		}
	}
	for _, t := range req.Tools {
		w.Tools = append(w.Tools, WireTool{Name: t.Name, Description: t.Description, Schema: t.Parameters})
	}
	return w
}

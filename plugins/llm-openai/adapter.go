package llmopenai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dshgo/harness/services/llm"
)

// Adapter is an llm.Adapter for one OpenAI-compatible route. Create it with
// [New]; it is safe for concurrent use and holds no goroutines.
type Adapter struct {
	cfg    Config
	models []llm.Model
	client *transport
	http   *http.Client
	// sleep waits between retries; tests may shorten it.
	sleep func(ctx context.Context, d time.Duration) error
	// logger receives one warning per retry; the plugin sets its own.
	logger *slog.Logger
	// keyErr is set when the route needs a key and has none: every request
	// fails with it (CodeAuth wrapping llm.ErrMissingAPIKey).
	keyErr *llm.Error
}

// KeyError returns the error every request of this route fails with because
// no API key is configured, or nil when the route is usable.
func (a *Adapter) KeyError() error {
	if a.keyErr == nil {
		return nil
	}
	return a.keyErr
}

// New validates cfg, reads the API key (APIKey, else $APIKeyEnv) and builds
// the adapter. A missing required key does not fail New: the adapter is
// built and every Stream finishes at once with a CodeAuth error wrapping
// llm.ErrMissingAPIKey that names the variable and the config field (see
// KeyError). httpClient may be nil (http.DefaultClient's transport).
func New(cfg Config, httpClient *http.Client) (*Adapter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	key, err := cfg.apiKey()
	var keyErr *llm.Error
	if err != nil {
		keyErr = &llm.Error{Code: llm.CodeAuth, Message: err.Error(), Err: llm.ErrMissingAPIKey}
	}
	if httpClient == nil {
		// A transport of its own, so Close can drop this route's idle
		// connections when the plugin unloads.
		httpClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	header := http.Header{}
	if key != "" {
		header.Set("Authorization", "Bearer "+key)
	} // none at all for key-less local servers
	if llm.UserAgent != "" { // before cfg.Headers, which may override it
		header.Set("User-Agent", llm.UserAgent)
	}
	for k, v := range cfg.Headers {
		header.Set(k, v)
	}
	return &Adapter{
		keyErr: keyErr,
		cfg:    cfg,
		http:   httpClient,
		models: cfg.models(),
		// Nothing from the environment (OPENAI_API_KEY, OPENAI_ORG_ID, …)
		// is folded into a request: that would hand one provider's
		// credentials to another route.
		client: &transport{base: strings.TrimRight(cfg.BaseURL, "/") + "/", client: httpClient, header: header},
		sleep:  sleepCtx,
		logger: slog.New(slog.DiscardHandler),
	}, nil
}

// Close drops idle keep-alive connections. Streams in progress are not
// affected; the adapter stays usable.
func (a *Adapter) Close() { a.http.CloseIdleConnections() }

// Provider returns the route name.
func (a *Adapter) Provider() string { return a.cfg.Provider }

// Models returns the configured models.
func (a *Adapter) Models() []llm.Model {
	out := make([]llm.Model, len(a.models))
	copy(out, a.models)
	return out
}

// ResolveModel finds a listed model or alias; with AnyModel, any other
// non-empty name resolves to a bare model of that name.
func (a *Adapter) ResolveModel(name string) (llm.Model, bool) {
	if m, ok := llm.ResolveModel(a.models, name); ok {
		return m, true
	}
	if a.cfg.AnyModel && name != "" {
		return llm.Model{Provider: a.cfg.Provider, Name: name}, true
	}
	return llm.Model{}, false
}

// Stream performs req (req.Model is a model name or alias of this route).
// See the package doc for the wire contract.
func (a *Adapter) Stream(ctx context.Context, req llm.Request) llm.Stream {
	if a.keyErr != nil {
		return llm.FinishWith(a.keyErr)
	}
	m, ok := a.ResolveModel(req.Model)
	if !ok {
		return llm.FinishWith(llm.Errorf(llm.CodeNoAdapter, "provider %q has no model %q", a.cfg.Provider, req.Model))
	}
	opts, oerr := llm.EffectiveOptions(m, req.Options)
	if oerr != nil {
		return llm.FinishWith(oerr)
	}
	body, err := encodeRequest(m.Name, req, opts)
	if err != nil {
		return llm.FinishWith(&llm.Error{Code: llm.CodeProtocol, Message: "building the request: " + err.Error(), Err: err})
	}
	return func(yield func(llm.Chunk) bool) {
		for attempt := 0; ; attempt++ {
			t := newTranslator(yield)
			lerr := a.attempt(ctx, body, t)
			if t.stopped {
				return
			}
			if lerr != nil && !t.emitted && lerr.Retryable() && attempt < a.cfg.maxRetries() {
				if delay, ok := a.backoff(attempt, lerr); ok {
					a.logger.Warn("model request failed before any output; retrying",
						"provider", a.cfg.Provider, "model", m.Name, "code", string(lerr.Code), "status", lerr.Status,
						"attempt", attempt+1, "delay", delay, "error", lerr.Message)
					if a.sleep(ctx, delay) != nil {
						t.end(llm.Aborted(ctx))
						return
					}
					continue
				}
			}
			if lerr != nil && lerr.Code == llm.CodeAuth {
				lerr.Message += a.keyHint()
			}
			t.end(lerr)
			return
		}
	}
}

// attempt runs one HTTP request and feeds its events to t. It returns nil
// when the stream ended normally (t.end not yet called).
func (a *Adapter) attempt(parent context.Context, reqBody []byte, t *translator) *llm.Error {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	idle := newIdleTimer(time.Duration(a.cfg.Timeout), cancel)
	defer idle.stop()

	res, err := a.client.post(ctx, "chat/completions", reqBody)
	if err != nil {
		return classify(parent, ctx, err)
	}
	// Any bytes, SSE keep-alive comments included, show the endpoint is
	// alive: the idle timer restarts on every read, not on every event.
	body := &limitedBody{rc: res.Body, left: a.cfg.maxResponseBytes(), onData: idle.reset}
	res.Body = body
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt == "application/json" {
		// A server (or proxy) that ignored stream=true: one whole completion.
		defer res.Body.Close()
		return a.whole(parent, ctx, res, t)
	}
	defer res.Body.Close()
	dec := newSSEDecoder(res.Body)
	events := 0
	var err2 error
	for dec.next() {
		var c wireChunk
		done, err := chunkOf(dec.event(), &c)
		if done || err != nil {
			err2 = err
			break
		}
		events++
		t.add(&c)
		if t.stopped {
			return nil
		}
	}
	if err2 == nil {
		err2 = dec.err
	}
	if err := err2; err != nil {
		if body.over {
			return a.tooLarge()
		}
		if t.finish != "" && !isStreamError(err) && parent.Err() == nil {
			// The reply was complete; only the trailer ([DONE]) was lost.
			return nil
		}
		return classify(parent, ctx, err)
	}
	if parent.Err() != nil {
		return llm.Aborted(parent)
	}
	if !t.emitted && t.finish == "" {
		if events == 0 && !looksLikeSSE(body.head) {
			// A proxy's error page sent with status 200: say what came.
			return &llm.Error{Code: llm.CodeProtocol, Message: fmt.Sprintf(
				"the response is not an SSE stream (HTTP %d, Content-Type %q): %s",
				res.StatusCode, res.Header.Get("Content-Type"), quoteHead(body.head))}
		}
		// HTTP 200, then only keep-alives (or empty events) and the end:
		// nothing was output, so it is retried like a reset connection.
		return &llm.Error{Code: llm.CodeNetwork, Message: fmt.Sprintf(
			"the stream ended before any output (%d events, no finish_reason)", events)}
	}
	return nil
}

// keyHint says where the rejected key came from, for AUTH errors.
func (a *Adapter) keyHint() string {
	switch {
	case a.cfg.APIKey != "":
		return fmt.Sprintf(" (the key is config field apiKey of the llm-openai row for provider %q)", a.cfg.Provider)
	case a.cfg.APIKeyEnv != "":
		return fmt.Sprintf(" (the key is read from the environment variable %s)", a.cfg.APIKeyEnv)
	}
	return fmt.Sprintf(" (no key configured: set apiKey or apiKeyEnv of the llm-openai row for provider %q)", a.cfg.Provider)
}

// tooLarge is the error of a response that went past MaxResponseBytes.
func (a *Adapter) tooLarge() *llm.Error {
	return &llm.Error{Code: llm.CodeProtocol, Err: errTooLarge, Message: fmt.Sprintf(
		"the response went past %d bytes and was cut (config field maxResponseBytes of the llm-openai row for provider %q)",
		a.cfg.maxResponseBytes(), a.cfg.Provider)}
}

// errTooLarge is read from a response body past MaxResponseBytes.
var errTooLarge = errors.New("response body too large")

// limitedBody is a response body that fails with errTooLarge once more
// than left bytes were read.
type limitedBody struct {
	rc     io.ReadCloser
	left   int64
	over   bool
	onData func() // called after every read that returned bytes
	head   []byte // the first headBytes bytes read, for error messages
}

// headBytes is how much of a response body limitedBody keeps.
const headBytes = 512

// looksLikeSSE reports whether the start of a body is made of SSE lines
// only: empty, comments (":"), or the fields data, event, id and retry.
// The last line may be cut.
func looksLikeSSE(head []byte) bool {
	lines := strings.Split(strings.ReplaceAll(string(head), "\r\n", "\n"), "\n")
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\r")
		if l == "" || l[0] == ':' {
			continue
		}
		field, _, colon := strings.Cut(l, ":")
		switch field {
		case "data", "event", "id", "retry":
			continue
		}
		if !colon && i == len(lines)-1 && len(head) == headBytes {
			continue // a line cut by headBytes
		}
		return false
	}
	return true
}

// quoteHead quotes the first 200 bytes of head for an error message.
func quoteHead(head []byte) string {
	if len(head) == 0 {
		return "an empty body"
	}
	s := string(head)
	if len(s) > 200 {
		return strconv.Quote(s[:200]) + "…"
	}
	return strconv.Quote(s)
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.over {
		return 0, errTooLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1] // one byte past the limit tells "too large"
	}
	n, err := b.rc.Read(p)
	if n > 0 && b.onData != nil {
		b.onData()
	}
	if int64(n) > b.left {
		b.over = true
		return int(b.left), errTooLarge
	}
	b.left -= int64(n)
	if k := min(n, headBytes-len(b.head)); k > 0 {
		b.head = append(b.head, p[:k]...)
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }

// whole translates a non-streamed chat.completion response: its message is
// fed to t as a single delta, so the chunk contract is the same.
func (a *Adapter) whole(parent, ctx context.Context, res *http.Response, t *translator) *llm.Error {
	body, err := io.ReadAll(res.Body)
	if errors.Is(err, errTooLarge) {
		return a.tooLarge()
	}
	if err != nil {
		return classify(parent, ctx, err)
	}
	var w struct {
		Choices []struct {
			Index        int             `json:"index"`
			Message      json.RawMessage `json:"message"`
			FinishReason *string         `json:"finish_reason"`
		} `json:"choices"`
		Usage *wireUsage `json:"usage"`
		Model string     `json:"model"`
		ID    string     `json:"id"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		return &llm.Error{Code: llm.CodeProtocol, Message: "malformed JSON response: " + err.Error(), Err: err}
	}
	c := wireChunk{Usage: w.Usage, Model: w.Model, ID: w.ID}
	c.Choices = make([]wireChoice, len(w.Choices))
	for i, ch := range w.Choices {
		c.Choices[i].Index, c.Choices[i].FinishReason = ch.Index, ch.FinishReason
		if len(ch.Message) > 0 {
			if err := json.Unmarshal(ch.Message, &c.Choices[i].Delta); err != nil {
				return &llm.Error{Code: llm.CodeProtocol, Message: "malformed message in JSON response: " + err.Error(), Err: err}
			}
		}
	}
	t.add(&c)
	return nil
}

func isStreamError(err error) bool {
	var se *streamError
	return errors.As(err, &se)
}

// backoff returns the delay before retry number attempt+1: the provider's
// Retry-After when given (final if it exceeds RetryMaxDelay), else
// exponential from RetryBaseDelay with jitter in [50%, 100%].
func (a *Adapter) backoff(attempt int, err *llm.Error) (time.Duration, bool) {
	maxDelay := time.Duration(a.cfg.RetryMaxDelay)
	if err.RetryAfter > 0 {
		if maxDelay > 0 && err.RetryAfter > maxDelay {
			return 0, false
		}
		return err.RetryAfter, true
	}
	d := time.Duration(a.cfg.RetryBaseDelay) << attempt
	if maxDelay > 0 && (d > maxDelay || d <= 0) {
		d = maxDelay
	}
	if d <= 0 {
		return 0, true
	}
	return d/2 + rand.N(d/2+1), true
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

// errIdle is the cancellation cause when the endpoint is silent too long.
var errIdle = errors.New("no data from the endpoint within the timeout")

// idleTimer cancels an attempt when no event arrives within d.
type idleTimer struct {
	mu sync.Mutex
	t  *time.Timer
	d  time.Duration
}

func newIdleTimer(d time.Duration, cancel context.CancelCauseFunc) *idleTimer {
	it := &idleTimer{d: d}
	if d > 0 {
		it.t = time.AfterFunc(d, func() { cancel(errIdle) })
	}
	return it
}

func (it *idleTimer) reset() {
	if it.t != nil {
		it.mu.Lock()
		it.t.Reset(it.d)
		it.mu.Unlock()
	}
}

func (it *idleTimer) stop() {
	if it.t != nil {
		it.t.Stop()
	}
}

package acp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/tools"
)

// session is one ACP session: an open agent session and the mapping of
// its events.
type session struct {
	id   string
	srv  *server
	host *hostEntry
	ss   *agent.Session

	mu        sync.Mutex // the mapper, and the order of the updates sent
	m         *mapper
	running   context.CancelFunc // the running prompt's; nil when none
	turnDone  chan struct{}      // closed when the running prompt ends
	questions int                // approval questions of no call asked so far

	used    uint64 // the server's use counter when last looked up (s.mu)
	reopen  reopen // how to open it again after evict (mode under s.mu)
	retired bool   // evict closed it (ss.mu)
}

// isRunning reports whether a prompt of the session runs.
func (ss *session) isRunning() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.running != nil
}

// invalidParams is a JSON-RPC Invalid params error saying what is wrong.
func invalidParams(format string, args ...any) *sdk.RequestError {
	msg := fmt.Sprintf(format, args...)
	return &sdk.RequestError{Code: -32602, Message: "Invalid params: " + msg, Data: map[string]any{"error": msg}}
}

// internalError is a JSON-RPC Internal error saying what failed.
func internalError(err error) *sdk.RequestError {
	return &sdk.RequestError{Code: -32603, Message: "Internal error: " + err.Error(), Data: map[string]any{"error": err.Error()}}
}

// Initialize implements sdk.Agent: the protocol version, loadSession,
// text and embedded-context prompts, no authentication.
func (s *server) Initialize(_ context.Context, p sdk.InitializeRequest) (_ sdk.InitializeResponse, err error) {
	defer contain(&err, s.o.Logger, "initialize")
	s.mu.Lock()
	s.terminal = p.ClientCapabilities.Meta["terminal_output"] == true
	s.mu.Unlock()
	version := sdk.ProtocolVersion(sdk.ProtocolVersionNumber)
	if p.ProtocolVersion > 0 && p.ProtocolVersion < version {
		version = p.ProtocolVersion
	}
	return sdk.InitializeResponse{
		ProtocolVersion: version,
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:         true,
			PromptCapabilities:  sdk.PromptCapabilities{EmbeddedContext: true},
			SessionCapabilities: sdk.SessionCapabilities{Close: &sdk.SessionCloseCapabilities{}},
			McpCapabilities:     sdk.McpCapabilities{Http: true, Sse: true},
		},
		AgentInfo:   &sdk.Implementation{Name: "harness", Title: sdk.Ptr("harness"), Version: s.o.Version},
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

// Authenticate implements sdk.Agent: there is nothing to authenticate
// (the manifest names the model's credentials).
func (s *server) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

// NewSession implements sdk.Agent: a new agent session in the client's
// working directory, with that directory's configuration.
func (s *server) NewSession(ctx context.Context, p sdk.NewSessionRequest) (_ sdk.NewSessionResponse, err error) {
	defer contain(&err, s.o.Logger, "session/new")
	ss, err := s.open(ctx, p.Cwd, "", p.McpServers)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	if u, ok := commandsUpdate(ss.host.Root); ok {
		s.afterResponse(ss.id, func() {
			ss.mu.Lock()
			defer ss.mu.Unlock()
			ss.sendLocked(u)
		})
	}
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(ss.id), Modes: modes(ss)}, nil
}

// LoadSession implements sdk.AgentLoader: it opens the stored session,
// replays its conversation as session updates, then answers; the next
// prompt continues it.
func (s *server) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (_ sdk.LoadSessionResponse, err error) {
	defer contain(&err, s.o.Logger, "session/load")
	if !agent.ValidSessionID(string(p.SessionId)) {
		return sdk.LoadSessionResponse{}, invalidParams("sessionId %q: not a session id", p.SessionId)
	}
	s.mu.Lock()
	ss := s.sessions[string(p.SessionId)]
	delete(s.closed, string(p.SessionId))
	s.mu.Unlock()
	if ss == nil {
		if ss, err = s.open(ctx, p.Cwd, string(p.SessionId), p.McpServers); err != nil {
			return sdk.LoadSessionResponse{}, err
		}
	}
	recs, err := agent.ReadSession(ctx, ss.host.Agent.Sessions(), ss.id)
	if err != nil && !errors.Is(err, sessions.ErrNotFound) {
		return sdk.LoadSessionResponse{}, internalError(fmt.Errorf("reading session %s: %w", ss.id, err))
	}
	ss.mu.Lock()
	for _, u := range replay(recs, ss.m.terminal) {
		ss.sendLocked(u)
	}
	if u, ok := commandsUpdate(ss.host.Root); ok {
		ss.sendLocked(u)
	}
	ss.mu.Unlock()
	return sdk.LoadSessionResponse{Modes: modes(ss)}, nil
}

// open opens an agent session (id "" for a new one) in the client's
// working directory dir, with the client's MCP servers. When
// MaxOpenSessions are open, the least recently used idle one is closed
// first (see evict).
func (s *server) open(ctx context.Context, dir, id string, mcpServers []sdk.McpServer) (*session, error) {
	return s.openAs(ctx, reopen{dir: dir, servers: mcpServers}, agent.Options{ID: id}, false)
}

// openAs opens the agent session o names (its Cwd and Observer set here)
// with r's directory and MCP servers; orNew opens a session o.ID names
// that was never stored as a new session with that id.
func (s *server) openAs(ctx context.Context, r reopen, o agent.Options, orNew bool) (*session, error) {
	dir, err := workDir(r.dir)
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	servers, err := mcpServersOf(r.servers)
	if err != nil {
		return nil, invalidParams("%v", err)
	}
	h, err := s.host(ctx, dir, servers)
	if err != nil {
		return nil, internalError(err)
	}
	s.evict()
	s.mu.Lock()
	terminal := s.terminal
	s.mu.Unlock()
	ss := &session{srv: s, host: h, m: newMapper(terminal), reopen: reopen{dir: dir, servers: r.servers, mode: r.mode}}
	o.Cwd, o.Observer = dir, ss.observe
	as, err := h.Agent.Open(ctx, o)
	if orNew && errors.Is(err, agent.ErrSessionNotFound) {
		as, err = h.Agent.Open(ctx, agent.Options{NewID: o.ID, Cwd: o.Cwd, Observer: o.Observer})
	}
	if err != nil {
		s.release(h)
	}
	switch {
	case errors.Is(err, agent.ErrSessionNotFound):
		return nil, invalidParams("session %s: no stored session with this id (%v)", o.ID, err)
	case errors.Is(err, agent.ErrSessionInUse):
		return nil, invalidParams("session %s: %v", o.ID, err)
	case err != nil:
		return nil, internalError(err)
	}
	ss.ss, ss.id = as, as.ID()
	if r.mode != "" {
		if sw, _, ok := switcher(h.Root); ok {
			_ = sw.SetPermissionMode(as.Scope(), r.mode) // the mode the client set before the session was closed
		}
	}
	s.mu.Lock()
	s.seq++
	ss.used = s.seq
	s.sessions[ss.id] = ss
	s.mu.Unlock()
	return ss, nil
}

// mcpServersOf converts the client's MCP servers, sorted by name; a
// server without a name, a name given twice, a stdio server without a
// command or an HTTP one without a URL is an error naming it.
func mcpServersOf(in []sdk.McpServer) ([]MCPServer, error) {
	var out []MCPServer
	seen := map[string]bool{}
	for i, m := range in {
		var s MCPServer
		switch {
		case m.Stdio != nil:
			s = MCPServer{Name: m.Stdio.Name, Type: "stdio", Command: m.Stdio.Command, Args: m.Stdio.Args}
			for _, e := range m.Stdio.Env {
				if s.Env == nil {
					s.Env = map[string]string{}
				}
				s.Env[e.Name] = e.Value
			}
		case m.Http != nil:
			s = MCPServer{Name: m.Http.Name, Type: "http", URL: m.Http.Url, Headers: headers(m.Http.Headers)}
		case m.Sse != nil:
			s = MCPServer{Name: m.Sse.Name, Type: "sse", URL: m.Sse.Url, Headers: headers(m.Sse.Headers)}
		default:
			return nil, fmt.Errorf("mcpServers[%d]: not a stdio, http or sse server", i)
		}
		switch {
		case s.Name == "":
			return nil, fmt.Errorf("mcpServers[%d]: no name", i)
		case seen[s.Name]:
			return nil, fmt.Errorf("mcpServers[%d]: the name %q is given twice", i, s.Name)
		case s.Type == "stdio" && s.Command == "":
			return nil, fmt.Errorf("mcpServers[%d] (%s): no command", i, s.Name)
		case s.Type != "stdio" && s.URL == "":
			return nil, fmt.Errorf("mcpServers[%d] (%s): no url", i, s.Name)
		}
		seen[s.Name] = true
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b MCPServer) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func headers(hs []sdk.HttpHeader) map[string]string {
	if len(hs) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, h := range hs {
		out[h.Name] = h.Value
	}
	return out
}

// Prompt implements sdk.Agent: one turn of the session, its events
// streamed as session updates; the stop reason says how it ended.
func (s *server) Prompt(ctx context.Context, p sdk.PromptRequest) (_ sdk.PromptResponse, err error) {
	defer contain(&err, s.o.Logger, "session/prompt")
	text := promptText(p.Prompt)
	if strings.TrimSpace(text) == "" {
		return sdk.PromptResponse{}, invalidParams("prompt: no text (text, resource and resource_link blocks are read)")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel) // Serve ends: the turn ends
	defer stop()
	ss, err := s.session(ctx, p.SessionId)
	if err == nil {
		if err = ss.start(cancel); errors.Is(err, errRetired) {
			if ss, err = s.session(ctx, p.SessionId); err == nil { // evict took it just now: open it again
				err = ss.start(cancel)
			}
		}
	}
	if errors.Is(err, errBusy) {
		return sdk.PromptResponse{}, &sdk.RequestError{Code: -32600, Message: "Invalid request: a prompt of this session is already running (session/cancel it first)"}
	}
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	s.turns.Add(1)
	defer s.turns.Done()
	defer func() { ss.finish(ctx.Err() != nil) }() // also after a panic (contain answers it)
	text, run, err := ss.expand(ctx, text)
	if err != nil {
		return sdk.PromptResponse{}, invalidParams("%v", err)
	}
	if !run {
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	}
	res, runErr := ss.ss.Run(ctx, text)
	return stopReason(res, runErr, ctx.Err() != nil)
}

// stopReason maps the end of a turn to ACP's: a finished turn is end_turn,
// a cancelled one cancelled, a reply cut by the output limit max_tokens,
// the step limit max_turn_requests; a turn the budget stopped is end_turn
// (the budget's notice was sent as message text). A failed model call or
// session is a JSON-RPC error naming it.
func stopReason(res *agent.Result, err error, cancelled bool) (sdk.PromptResponse, error) {
	if cancelled || res != nil && res.Reason == "aborted" {
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	if res == nil {
		if err == nil {
			err = errors.New("the turn ended without a result")
		}
		return sdk.PromptResponse{}, internalError(err)
	}
	switch res.Reason {
	case "length":
		return sdk.PromptResponse{StopReason: sdk.StopReasonMaxTokens}, nil
	case "max_steps":
		return sdk.PromptResponse{StopReason: sdk.StopReasonMaxTurnRequests}, nil
	case "error":
		if err == nil {
			err = errors.New(res.Error)
		}
		return sdk.PromptResponse{}, internalError(err)
	}
	return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
}

// promptText is the prompt's text: text blocks as they are, an embedded
// text resource as its URI and text, a resource link as its URI, in
// order; images, audio and binary resources are left out.
func promptText(blocks []sdk.ContentBlock) string {
	var parts []string
	for _, b := range blocks {
		switch {
		case b.Text != nil:
			parts = append(parts, b.Text.Text)
		case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
			r := b.Resource.Resource.TextResourceContents
			parts = append(parts, fmt.Sprintf("<context uri=%q>\n%s\n</context>", r.Uri, r.Text))
		case b.ResourceLink != nil:
			parts = append(parts, b.ResourceLink.Uri)
		}
	}
	return strings.Join(parts, "\n")
}

// Cancel implements sdk.Agent: the session's running prompt is cancelled
// (the SDK cancels the prompt's context; this covers a prompt between
// its start and that context).
func (s *server) Cancel(_ context.Context, p sdk.CancelNotification) (err error) {
	defer contain(&err, s.o.Logger, "session/cancel")
	ss, err := s.lookup(p.SessionId)
	if err != nil {
		return err
	}
	ss.mu.Lock()
	cancel := ss.running
	ss.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return nil
}

// CloseSession implements sdk.Agent: the running prompt is cancelled and
// the session closed (it stays stored).
func (s *server) CloseSession(_ context.Context, p sdk.CloseSessionRequest) (_ sdk.CloseSessionResponse, err error) {
	defer contain(&err, s.o.Logger, "session/close")
	s.mu.Lock()
	_, evicted := s.closed[string(p.SessionId)]
	delete(s.closed, string(p.SessionId))
	s.mu.Unlock()
	ss, err := s.lookup(p.SessionId)
	if err != nil {
		if evicted {
			return sdk.CloseSessionResponse{}, nil
		}
		return sdk.CloseSessionResponse{}, err
	}
	s.mu.Lock()
	delete(s.sessions, ss.id)
	s.mu.Unlock()
	if err := ss.close(); err != nil {
		return sdk.CloseSessionResponse{}, internalError(err)
	}
	return sdk.CloseSessionResponse{}, nil
}

// ListSessions implements sdk.Agent: not supported (not advertised).
func (s *server) ListSessions(context.Context, sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	return sdk.ListSessionsResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionList)
}

// ResumeSession implements sdk.Agent: not supported (not advertised).
func (s *server) ResumeSession(context.Context, sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionResume)
}

// SetSessionConfigOption implements sdk.Agent: not supported (no config
// options are advertised).
func (s *server) SetSessionConfigOption(context.Context, sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	return sdk.SetSessionConfigOptionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionSetConfigOption)
}

// start marks a prompt running: errBusy when one already runs, errRetired
// when evict closed the session.
func (ss *session) start(cancel context.CancelFunc) error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	switch {
	case ss.retired:
		return errRetired
	case ss.running != nil:
		return errBusy
	}
	ss.running, ss.turnDone = cancel, make(chan struct{})
	return nil
}

var (
	errRetired = errors.New("the session was closed")
	errBusy    = errors.New("a prompt of this session is already running")
)

// finish ends the running prompt: the calls it left without a result are
// failed.
func (ss *session) finish(cancelled bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	reason := "the turn ended before the call's result"
	if cancelled {
		reason = "cancelled"
	}
	for _, u := range ss.m.unfinished(reason) {
		ss.sendLocked(u)
	}
	if ss.turnDone != nil {
		close(ss.turnDone)
	}
	ss.running, ss.turnDone = nil, nil
}

// observe is the agent session's observer.
func (ss *session) observe(e agent.Event) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for _, u := range ss.m.updates(e) {
		ss.sendLocked(u)
	}
}

// started reports that call id's body started: an announced call still
// pending becomes in_progress.
func (ss *session) started(id string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	p := ss.m.open[id]
	if p == nil || p.Status != tools.StatusPending {
		return
	}
	for _, u := range ss.m.update(&tools.Presentation{ToolCallID: id, Status: tools.StatusInProgress}) {
		ss.sendLocked(u)
	}
}

// sendLocked sends one update of the session (ss.mu held, so updates
// leave in the order they were made).
func (ss *session) sendLocked(u sdk.SessionUpdate) {
	err := ss.srv.conn.SessionUpdate(ss.srv.ctx, sdk.SessionNotification{SessionId: sdk.SessionId(ss.id), Update: u})
	if err != nil {
		ss.srv.o.Logger.Debug("acp: session update not sent", "session", ss.id, "err", err)
	}
}

// close cancels the running prompt, waits (at most 10 s) for it to end,
// and closes the agent session.
func (ss *session) close() error {
	ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	ss.mu.Lock()
	cancel, done := ss.running, ss.turnDone
	ss.mu.Unlock()
	if cancel != nil {
		cancel()
		select {
		case <-done:
		case <-ctx.Done():
		}
	}
	defer ss.srv.release(ss.host)
	return ss.ss.Close(ctx)
}

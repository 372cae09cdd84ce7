package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/dshgo/harness/services/subprocess"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// State is the state of one server, as `harness mcp list` shows it.
type State string

// Server states.
const (
	StateStarting   State = "starting"   // first connect in progress
	StateReady      State = "ready"      // connected; tools registered
	StateFailed     State = "failed"     // could not connect (see Error)
	StateExited     State = "exited"     // connected once, then the server exited or the connection broke
	StateRestarting State = "restarting" // exited; reconnecting (restart: on-failure)
	StateDisabled   State = "disabled"   // disabled: true
	StateStopped    State = "stopped"    // the row was disposed
)

// protocolVersion is the MCP revision the client asks for: the latest
// revision the npm servers and most deployed servers speak. The SDK's
// stateless 2026-07-28 draft is not requested.
const protocolVersion = "2025-11-25"

// maxRestarts bounds consecutive reconnects of a restart: on-failure server.
const maxRestarts = 5

// errStartupTimeout and errCallTimeout are the causes of the two deadlines.
var (
	errStartupTimeout = errors.New("startup timeout")
	errCallTimeout    = errors.New("call timeout")
)

// conn is one live connection to a server: the SDK session and, for a
// stdio server, the process (in its own managed range) and its stderr drain.
type conn struct {
	m       *Manager
	client  *mcp.Client
	session *mcp.ClientSession
	proc    *subprocess.Handle
	stdin   io.Closer
	drained chan struct{}
	grace   time.Duration
	closed  chan struct{} // closed when the session's connection has ended
	spawned time.Time     // when the stdio server's process was started (zero for http/sse)
	// sandboxed is set for a stdio server spawned under a sandbox policy.
	sandboxed bool
}

// close shuts the connection down: for a stdio server, close stdin, give
// the server Grace to exit, then terminate its whole range (SIGTERM, SIGKILL
// after Grace) and wait until the range is empty; then close the session.
// Bounded by about 3×Grace plus ctx.
func (c *conn) close(ctx context.Context) {
	if c.proc != nil {
		_ = c.stdin.Close()
		t := time.NewTimer(c.grace)
		select {
		case <-c.proc.Done():
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		c.proc.Terminate()
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*c.grace+time.Second)
		_, _ = c.proc.WaitForExit(wctx)
		cancel()
	}
	_ = c.session.Close()
	c.m.forgetClient(c.client)
	if c.drained != nil {
		t := time.NewTimer(c.grace)
		select {
		case <-c.drained:
		case <-t.C:
		}
		t.Stop()
	}
}

// onceCloser makes Close idempotent: the SDK closes the writer it was given
// and conn.close closes stdin first.
type onceCloser struct {
	io.WriteCloser
	once sync.Once
	err  error
}

func (o *onceCloser) Close() error {
	o.once.Do(func() { o.err = o.WriteCloser.Close() })
	return o.err
}

// dial connects to s once: spawn (stdio) or HTTP, initialize within the
// startup timeout. The returned error names nothing; the caller adds the
// server name.
func (s *server) dial(parent context.Context) (*conn, error) {
	startup := s.startupTimeout()
	ctx, cancel := context.WithTimeoutCause(parent, startup, errStartupTimeout)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "harness", Version: s.m.version}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { s.signalRelist() },
	})
	s.m.trackClient(client)
	c := &conn{m: s.m, grace: s.m.grace, closed: make(chan struct{}), client: client}
	var t mcp.Transport
	switch s.cfg.Type {
	case TypeStdio:
		st, err := s.spawn(c)
		if err != nil {
			return nil, err
		}
		t = st
	case TypeHTTP:
		t = &mcp.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.httpClient(), MaxRetries: -1}
	case TypeSSE:
		t = &mcp.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.httpClient()}
	}
	session, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: protocolVersion})
	if err != nil {
		s.m.forgetClient(client)
		if errors.Is(context.Cause(ctx), errStartupTimeout) {
			err = fmt.Errorf("no answer to initialize within the startup timeout (%s)", startup)
		}
		if c.proc != nil {
			c.session = nil
			// Shutting down (the row is disposed while the server is still
			// connecting): a server that has been given no work gets no
			// stdin grace, so a slow or dead one does not delay the exit of
			// a command that never used it.
			s.abandon(c, parent.Err() != nil)
			return nil, s.withExit(err, c)
		}
		return nil, err
	}
	c.session = session
	go func() { _ = session.Wait(); close(c.closed) }()
	return c, nil
}

// spawn starts a stdio server through the subprocess service: its own
// managed range, scrubbed environment plus the configured entries, stdin and
// stdout as the JSON-RPC pipes, stderr drained into the bounded tail.
func (s *server) spawn(c *conn) (mcp.Transport, error) {
	rt := s.m.runtime
	if rt == nil {
		return nil, errors.New("stdio servers need the subprocess service (mount subprocess-local)")
	}
	dir := s.cfg.Cwd
	if dir == "" {
		dir = s.m.cwd
	}
	box := containmentOf(rt.SandboxPolicy(), s.cfg.Sandbox)
	if box.warning != "" {
		s.m.log.Warn("mcp server "+box.warning, "server", s.cfg.Name)
	}
	h, err := rt.Spawn(subprocess.Spec{
		Argv:   append([]string{s.cfg.Command}, s.cfg.Args...),
		Dir:    dir,
		Env:    s.cfg.Env,
		Stdin:  subprocess.PipeStdin(),
		Stdout: subprocess.PipeOutput(),
		Stderr: subprocess.PipeOutput(),
		Grace:  s.m.grace,
		// The deployment's policy, as for bash calls (containmentOf).
		Sandbox: box.policy,
	})
	if err != nil {
		return nil, fmt.Errorf("start %q: %w", s.cfg.Command, err)
	}
	c.proc, c.spawned, c.sandboxed = h, time.Now(), box.policy != nil
	stdin := &onceCloser{WriteCloser: h.Stdin()}
	c.stdin = stdin
	c.drained = make(chan struct{})
	tl, log, name := s.stderr, s.m.log, s.cfg.Name
	go func() { defer close(c.drained); drain(h.Stderr(), tl, log, name) }()
	return &mcp.IOTransport{Reader: h.Stdout(), Writer: stdin, MaxLineLength: s.m.maxMessage}, nil
}

// abandon closes a connection that never became a session: close stdin,
// give the server its grace to exit (skipped when now is set), terminate
// its range.
func (s *server) abandon(c *conn, now bool) {
	_ = c.stdin.Close()
	if !now {
		t := time.NewTimer(c.grace)
		select {
		case <-c.proc.Done():
		case <-t.C:
		}
		t.Stop()
	}
	c.proc.Terminate()
	ctx, cancel := context.WithTimeout(context.Background(), 2*c.grace+time.Second)
	_, _ = c.proc.WaitForExit(ctx)
	cancel()
	_ = c.proc.Stdout().Close()
	t := time.NewTimer(c.grace)
	select {
	case <-c.drained:
	case <-t.C:
	}
	t.Stop()
}

// withExit adds the exit status (when the process has exited) and the
// stderr tail to err.
func (s *server) withExit(err error, c *conn) error {
	msg := err.Error()
	if c != nil && c.proc != nil {
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-c.proc.Done():
			if o, werr := c.proc.Outcome(); werr == nil {
				msg = fmt.Sprintf("%s (server process %s)", msg, o)
			}
		case <-t.C:
		}
		t.Stop()
	}
	if s.stderr != nil {
		if tail := s.stderr.String(); tail != "" {
			msg += "; stderr tail:\n" + tail
		}
	}
	return errors.New(msg)
}

// headerTransport adds the configured headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (h *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// httpClient is the client of an http or sse server: the configured
// headers on every request, a dial timeout, and a response-header timeout
// of the call timeout (no overall timeout: the event stream is long-lived;
// each call is bounded by its own deadline).
func (s *server) httpClient() *http.Client {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ResponseHeaderTimeout: s.callTimeout(),
		TLSHandshakeTimeout:   10 * time.Second,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
	}
	return &http.Client{Transport: &headerTransport{base: tr, headers: s.cfg.Headers}}
}

func (s *server) startupTimeout() time.Duration {
	if s.cfg.StartupTimeout > 0 {
		return s.cfg.StartupTimeout.D()
	}
	return s.m.startup
}

func (s *server) callTimeout() time.Duration {
	if s.cfg.Timeout > 0 {
		return s.cfg.Timeout.D()
	}
	return s.m.call
}

// server is one configured server and its supervisor.
type server struct {
	m      *Manager
	cfg    namedServer
	relist chan struct{}
	first  chan struct{} // closed when the first connect attempt has settled

	mu        sync.Mutex
	state     State
	err       error
	conn      *conn
	stderr    *tail // stdio only; set before the supervisor starts, never replaced
	tools     []*mcp.Tool
	init      *mcp.InitializeResult
	toolsets  map[string]toolEntry // registry name → its registration
	restarts  int
	firstOnce sync.Once
}

func (s *server) signalRelist() {
	select {
	case s.relist <- struct{}{}:
	default:
	}
}

func (s *server) settleFirst() { s.firstOnce.Do(func() { close(s.first) }) }

func (s *server) set(state State, err error) {
	s.mu.Lock()
	s.state, s.err = state, err
	s.mu.Unlock()
	if err != nil {
		s.m.log.Warn("mcp server", "server", s.cfg.Name, "state", state, "err", err)
	}
}

// run is the server's supervisor (a goroutine of the plugin's fiber):
// connect, register tools, re-list on list_changed, notice exits, restart
// on failure, and close everything when ctx ends.
func (s *server) run(ctx context.Context) error {
	defer s.settleFirst()
	for attempt := 0; ; attempt++ {
		c, err := s.connect(ctx)
		if ctx.Err() != nil {
			if c != nil {
				c.close(ctx)
			}
			s.set(StateStopped, nil)
			return nil
		}
		if err == nil {
			attempt = -1
			s.settleFirst()
			err = s.serve(ctx, c)
			if ctx.Err() != nil {
				s.set(StateStopped, nil)
				return nil
			}
		}
		s.settleFirst()
		if s.cfg.Restart != RestartOnFailure || attempt+1 >= maxRestarts {
			<-ctx.Done()
			s.dropTools(context.WithoutCancel(ctx))
			s.set(StateStopped, s.lastErr())
			return nil
		}
		s.mu.Lock()
		s.restarts++
		s.state = StateRestarting
		s.mu.Unlock()
		backoff := time.Second << max(attempt, 0)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			s.set(StateStopped, s.lastErr())
			return nil
		case <-t.C:
		}
		_ = err
	}
}

func (s *server) lastErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// connect dials, lists the tools and mounts them. On failure the state is
// failed (first attempt) or exited, with the error.
// A debug log line "mcp server ready" gives the instant each phase ended
// (spawned, initialized, listed, mounted), so parallel connects can be
// checked for serialisation.
func (s *server) connect(ctx context.Context) (*conn, error) {
	start := time.Now()
	c, err := s.dial(ctx)
	if err == nil {
		initialized := time.Now()
		lctx, cancel := context.WithTimeout(ctx, s.startupTimeout())
		var list []*mcp.Tool
		list, err = listTools(lctx, c.session)
		cancel()
		if err == nil {
			listed := time.Now()
			s.mu.Lock()
			s.conn, s.init, s.tools, s.state, s.err = c, c.session.InitializeResult(), list, StateReady, nil
			s.mu.Unlock()
			if err = s.mountTools(ctx, list); err == nil {
				s.m.log.Debug("mcp server ready", "server", s.cfg.Name, "tools", len(list), "start", start,
					"spawned", c.spawned, "initialized", initialized, "listed", listed, "mounted", time.Now())
				return c, nil
			}
		}
		err = s.withExit(fmt.Errorf("tools/list: %w", err), c)
		c.close(ctx)
		s.mu.Lock()
		s.conn = nil
		s.mu.Unlock()
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	err = fmt.Errorf("mcp server %q: %w", s.cfg.Name, err)
	s.mu.Lock()
	if s.state == StateStarting || s.state == StateFailed {
		s.state = StateFailed
	} else {
		s.state = StateExited
	}
	s.err = err
	s.mu.Unlock()
	s.m.log.Warn("mcp server failed to connect", "server", s.cfg.Name, "err", err)
	return nil, err
}

// listTools reads every page of tools/list.
func listTools(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// serve watches a live connection until it ends (returns the exit error)
// or ctx ends (closes it; returns nil).
func (s *server) serve(ctx context.Context, c *conn) error {
	for {
		select {
		case <-ctx.Done():
			c.close(context.WithoutCancel(ctx))
			return nil
		case <-s.relist:
			lctx, cancel := context.WithTimeout(ctx, s.callTimeout())
			list, err := listTools(lctx, c.session)
			cancel()
			if err != nil {
				if ctx.Err() != nil {
					// Shutting down: the list was cut short on purpose.
					continue
				}
				s.m.log.Warn("mcp tools/list after list_changed", "server", s.cfg.Name, "err", err)
				continue
			}
			s.mu.Lock()
			s.tools = list
			s.mu.Unlock()
			if err := s.mountTools(ctx, list); err != nil && ctx.Err() == nil {
				s.m.log.Warn("mcp tools after list_changed", "server", s.cfg.Name, "err", err)
			}
		case <-c.closed:
			c.close(ctx)
			err := s.withExit(fmt.Errorf("mcp server %q exited", s.cfg.Name), c)
			s.mu.Lock()
			s.conn, s.state, s.err = nil, StateExited, err
			s.mu.Unlock()
			s.m.log.Warn("mcp server exited", "server", s.cfg.Name, "err", err)
			return err
		}
	}
}

// current returns the live session, or the error that says why there is
// none (naming the server, with the exit status and stderr tail).
func (s *server) current() (*mcp.ClientSession, error) {
	s.mu.Lock()
	c, state, err := s.conn, s.state, s.err
	s.mu.Unlock()
	if c != nil && state == StateReady {
		select {
		case <-c.closed:
			return nil, s.withExit(fmt.Errorf("mcp server %q exited", s.cfg.Name), c)
		default:
			return c.session, nil
		}
	}
	if err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("mcp server %q is %s", s.cfg.Name, state)
}

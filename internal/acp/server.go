package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/agent"
)

// Options configure [Serve].
type Options struct {
	// Boot boots the configured harness for the working directory dir
	// (absolute), with the manifest discovery and defaults `harness run`
	// has there, plus the MCP servers the client passed (none: nil).
	// Required. Serve calls it once per directory and set of servers, one
	// call at a time, and stops each harness it got when it returns.
	Boot func(ctx context.Context, dir string, servers []MCPServer) (*Host, error)
	// Version is sent to the client as the agent's version.
	Version string
	// Logger receives the server's diagnostics (nil: discarded).
	Logger *slog.Logger
}

// MCPServer is an MCP server the client passed with a session (ACP's
// McpServer): a command to start (Type "stdio") or a URL (Type "http" or
// "sse").
type MCPServer struct {
	Name    string            `json:"name"`
	Type    string            `json:"type"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// Host is a harness booted for one working directory.
type Host struct {
	// Agent is its agent service; Root its root context (where the
	// server adds its approval answerer).
	Agent *agent.Service
	Root  *core.Context
	// Stop stops the harness (its processes included); bounded by ctx.
	Stop func(ctx context.Context) error
}

// Serve runs an ACP agent on in (the client's messages, one JSON-RPC
// message per line) and out (the agent's) until in ends or ctx ends;
// then it cancels the running turns, waits for them, closes the sessions
// and stops the harnesses it booted. A read of in in progress when ctx
// ends is left to end with in.
func Serve(ctx context.Context, in io.Reader, out io.Writer, o Options) error {
	if ctx == nil {
		return errors.New("acp: nil context")
	}
	if o.Boot == nil {
		return errors.New("acp: Options.Boot is required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	pr, pw := io.Pipe()
	sctx, cancel := context.WithCancel(ctx)
	s := &server{o: o, ctx: sctx, hosts: map[string]*hostEntry{}, sessions: map[string]*session{}}
	w := &lockedWriter{w: out, written: s.written}
	conn := sdk.NewAgentSideConnection(s, w, pr)
	conn.SetLogger(o.Logger)
	s.conn = conn
	guarded := make(chan struct{})
	go func() {
		defer close(guarded)
		guard(in, pw, w)
	}()
	select {
	case <-conn.Done():
	case <-ctx.Done():
	}
	cancel()
	_ = pr.CloseWithError(io.EOF) // ends the SDK's reader and, at its next line, the guard
	s.turns.Wait()
	s.closeHooks()
	err := s.shutdown()
	select {
	case <-guarded:
	case <-ctx.Done(): // in may never end (a terminal): do not wait for it
	}
	return err
}

// server is the ACP agent: its sessions and the harnesses they run in.
type server struct {
	o    Options
	ctx  context.Context // ends when Serve returns
	conn *sdk.AgentSideConnection

	bootMu sync.Mutex // one Boot at a time

	mu       sync.Mutex
	terminal bool                     // the client shows terminals it did not create
	hosts    map[string]*hostEntry    // by working directory and MCP servers
	sessions map[string]*session      // open, by session id
	closed   map[string]closedSession // closed by evict, by session id
	seq      uint64                   // use counter (session.used)
	turns    sync.WaitGroup           // running prompts
	bg       sync.WaitGroup           // afterResponse goroutines

	hookMu      sync.Mutex
	hooks       map[string]func() // afterResponse functions, by session id
	hooksClosed bool              // Serve is ending: no more
}

var (
	_ sdk.Agent       = (*server)(nil)
	_ sdk.AgentLoader = (*server)(nil)
)

// hostEntry is a booted harness and what the server added to it.
type hostEntry struct {
	*Host
	dir   string
	key   string      // dir and the client's MCP servers
	fiber *core.Fiber // the server's plugin: the approval answerer and the tool-start listener
	users int         // open sessions and opens under way on it (s.mu)
	used  uint64      // the server's use counter when last handed out (s.mu)
}

// host returns the harness for dir with servers, booting it on first use.
func (s *server) host(ctx context.Context, dir string, servers []MCPServer) (*hostEntry, error) {
	key := dir
	if len(servers) > 0 {
		b, err := json.Marshal(servers)
		if err != nil {
			return nil, err
		}
		key += "\x00" + string(b)
	}
	s.bootMu.Lock()
	defer s.bootMu.Unlock()
	s.mu.Lock()
	h := s.hosts[key]
	if h != nil {
		s.useLocked(h)
	}
	s.mu.Unlock()
	if h != nil {
		return h, nil
	}
	if err := s.retireHosts(); err != nil {
		return nil, err
	}
	booted, err := s.o.Boot(ctx, dir, servers)
	if err != nil {
		return nil, err
	}
	h = &hostEntry{Host: booted, dir: dir, key: key}
	h.fiber = booted.Root.Plugin(s.plugin(), nil)
	if err := h.fiber.Await(ctx); err != nil {
		_ = s.stopHost(h)
		return nil, fmt.Errorf("acp: adding the approval answerer: %w", err)
	}
	s.mu.Lock()
	s.hosts[key] = h
	s.useLocked(h)
	s.mu.Unlock()
	return h, nil
}

// useLocked hands h out to one more session.
func (s *server) useLocked(h *hostEntry) {
	h.users++
	s.seq++
	h.used = s.seq
}

// release gives back a use of h (a session closed, or an open failed).
func (s *server) release(h *hostEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h.users > 0 {
		h.users--
	}
}

// shutdown closes every session, then stops every harness.
func (s *server) shutdown() error {
	s.mu.Lock()
	sessions := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		sessions = append(sessions, ss)
	}
	hosts := make([]*hostEntry, 0, len(s.hosts))
	for _, h := range s.hosts {
		hosts = append(hosts, h)
	}
	clear(s.sessions)
	clear(s.hosts)
	s.mu.Unlock()
	var errs []error
	for _, ss := range sessions {
		if err := ss.close(); err != nil {
			errs = append(errs, fmt.Errorf("session %s: %w", ss.id, err))
		}
	}
	for _, h := range hosts {
		if err := s.stopHost(h); err != nil {
			errs = append(errs, fmt.Errorf("harness for %s: %w", h.dir, err))
		}
	}
	return errors.Join(errs...)
}

// stopHost withdraws the server's plugin and stops the harness.
func (s *server) stopHost(h *hostEntry) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var errs []error
	if h.fiber != nil {
		errs = append(errs, h.fiber.Dispose(ctx))
	}
	if h.Stop != nil {
		errs = append(errs, h.Stop(ctx))
	}
	return errors.Join(errs...)
}

// workDir checks a client's working directory: absolute, an existing
// directory.
func workDir(dir string) (string, error) {
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("cwd %q: must be an absolute path", dir)
	}
	st, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("cwd: %w", err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("cwd %s: not a directory", dir)
	}
	return filepath.Clean(dir), nil
}

// lookup returns the open session id (see also server.session).
func (s *server) lookup(id sdk.SessionId) (*session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss := s.sessions[string(id)]; ss != nil {
		s.seq++
		ss.used = s.seq
		return ss, nil
	}
	return nil, invalidParams("sessionId %q: no such session open on this connection (session/new or session/load first)", id)
}

// contain turns a panic of a handler into an internal error, so that no
// request can bring the server down.
func contain(err *error, logger *slog.Logger, method string) {
	if r := recover(); r != nil {
		logger.Error("acp: handler panicked", "method", method, "panic", r)
		*err = sdk.NewInternalError(map[string]any{"error": fmt.Sprintf("%s: internal error: %v", method, r)})
	}
}

package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"sync"
	"time"

	"github.com/dshgo/harness/services/subprocess"
)

// Position is a zero-based line and UTF-16 character offset.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is a span of a document.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Diagnostic is one diagnostic as a server publishes it.
type Diagnostic struct {
	Range Range `json:"range"`
	// Severity is 1 error, 2 warning, 3 information, 4 hint (0: unset,
	// read as error).
	Severity int             `json:"severity,omitempty"`
	Code     json.RawMessage `json:"code,omitempty"`
	// Source names the part of the server that produced it ("compiler").
	Source  string `json:"source,omitempty"`
	Message string `json:"message"`
}

// fileDiags is what a server last published for one open document.
type fileDiags struct {
	version *int // nil when the server sent no version
	items   []Diagnostic
	seq     uint64 // publishes received for the document
}

// doc is an open document as the server last saw it.
type doc struct {
	version int
	text    string
	used    uint64 // recency stamp, for closing the least recently used
}

// errGaveUp wraps the failure of a server that is no longer restarted.
var errGaveUp = errors.New("not restarted again")

// errUnavailable marks a server whose command is not installed.
var errUnavailable = errors.New("not installed")

// server is one language server process for one (language, root), started
// on first use and started again after a crash, at most MaxRestarts times.
//
// mu serializes operations (start, open/change and wait, shutdown); dmu
// guards what the read loop writes (diagnostics), so the loop never waits
// for an operation in progress.
type server struct {
	m    *Manager
	lang string
	cfg  ServerConfig
	root string

	mu       sync.Mutex
	proc     *subprocess.Handle
	conn     *conn
	loopDone chan struct{} // closed when the current connection's read loop ended
	loopErr  error         // why it ended (set before loopDone closes)
	docs     map[string]*doc
	clock    uint64
	starts   int
	failed   error // set once the server is given up on
	stderr   *tail
	wg       sync.WaitGroup // the read loop and the stderr drain

	dmu     sync.Mutex
	open    map[string]bool // URIs whose diagnostics are kept
	diags   map[string]*fileDiags
	changed chan struct{} // closed and replaced at every publish
}

func newServer(m *Manager, lang string, cfg ServerConfig, root string) *server {
	return &server{m: m, lang: lang, cfg: cfg, root: root, docs: map[string]*doc{},
		open: map[string]bool{}, diags: map[string]*fileDiags{}, changed: make(chan struct{}), stderr: newTail(4 << 10)}
}

// ensureLocked starts the server when it is not running: the first time,
// and after a crash while restarts remain. s.mu is held.
func (s *server) ensureLocked(ctx context.Context) error {
	if s.failed != nil {
		return s.failed
	}
	if s.conn != nil {
		select {
		case <-s.loopDone:
			s.m.log.Debug("lsp: server ended", "language", s.lang, "root", s.root, "err", s.loopErr)
			s.stopLocked(ctx)
		default:
			return nil
		}
	}
	if s.starts > *s.m.cfg.MaxRestarts {
		s.failed = fmt.Errorf("%s exited %d times (%w); last: %s", s.cfg.Command, s.starts, errGaveUp, s.lastFailure())
		return s.failed
	}
	s.starts++
	if err := s.startLocked(ctx); err != nil {
		if errors.Is(err, errUnavailable) {
			s.failed = err
			return err
		}
		s.stopLocked(ctx)
		s.loopErr = err
		if s.starts > *s.m.cfg.MaxRestarts {
			s.failed = fmt.Errorf("%s failed to start %d times (%w); last: %v", s.cfg.Command, s.starts, errGaveUp, err)
			return s.failed
		}
		return err
	}
	return nil
}

// lastFailure describes why the last connection ended, with stderr's tail.
func (s *server) lastFailure() string {
	msg := "connection ended"
	if s.loopErr != nil {
		msg = s.loopErr.Error()
	}
	if t := s.stderr.String(); t != "" {
		msg += "; stderr tail: " + truncate(t, 600)
	}
	return msg
}

// startLocked spawns the process in the deployment's sandbox and runs the
// initialize handshake.
func (s *server) startLocked(ctx context.Context) error {
	rt := s.m.rt
	path, err := rt.ResolveExecutable(ctx, s.cfg.Command, s.cfg.Env)
	if err != nil {
		return fmt.Errorf("%s: %w (%v)", s.cfg.Command, errUnavailable, err)
	}
	var box *subprocess.SandboxPolicy
	if p := rt.SandboxPolicy(); p.Enabled() {
		box = &p
	}
	h, err := rt.Spawn(subprocess.Spec{
		Argv:    append([]string{path}, s.cfg.Args...),
		Dir:     s.root,
		Env:     s.cfg.Env,
		Stdin:   subprocess.PipeStdin(),
		Stdout:  subprocess.PipeOutput(),
		Stderr:  subprocess.PipeOutput(),
		Grace:   s.m.cfg.Grace.D(),
		Sandbox: box,
	})
	if err != nil {
		return fmt.Errorf("start %s: %w", s.cfg.Command, err)
	}
	s.proc = h
	s.loopDone = make(chan struct{})
	s.conn = newConn(h.Stdout(), h.Stdin(), s.m.cfg.MaxMessageBytes, s.handle)
	c, done := s.conn, s.loopDone
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		err := c.run()
		s.loopErr = fmt.Errorf("%s: %w", s.cfg.Command, err)
		close(done)
	}()
	go func() { defer s.wg.Done(); s.stderr.drain(h.Stderr()) }()
	return s.initialize(ctx)
}

// initialize runs the LSP handshake.
func (s *server) initialize(ctx context.Context) error {
	root := fileURI(s.root)
	params := map[string]any{
		"processId":        nil,
		"clientInfo":       map[string]any{"name": "harness"},
		"rootUri":          root,
		"workspaceFolders": []map[string]any{{"uri": root, "name": filepath.Base(s.root)}},
		"capabilities": map[string]any{
			"textDocument": map[string]any{
				"synchronization":    map[string]any{"dynamicRegistration": false},
				"publishDiagnostics": map[string]any{"versionSupport": true},
			},
			"workspace": map[string]any{"workspaceFolders": true, "configuration": true},
		},
	}
	if s.cfg.InitializationOptions != nil {
		params["initializationOptions"] = s.cfg.InitializationOptions
	}
	var result json.RawMessage
	if err := s.conn.call(ctx, "initialize", params, &result); err != nil {
		return err
	}
	return s.conn.notify(ctx, "initialized", map[string]any{})
}

// handle answers the server: diagnostics are kept for open documents;
// requests a client must answer get empty answers.
func (s *server) handle(method string, params json.RawMessage) (any, error) {
	switch method {
	case "textDocument/publishDiagnostics":
		var p struct {
			URI         string       `json:"uri"`
			Version     *int         `json:"version"`
			Diagnostics []Diagnostic `json:"diagnostics"`
		}
		if json.Unmarshal(params, &p) == nil {
			s.publish(p.URI, p.Version, p.Diagnostics)
		}
		return nil, nil
	case "workspace/configuration":
		var p struct {
			Items []json.RawMessage `json:"items"`
		}
		_ = json.Unmarshal(params, &p)
		return make([]any, len(p.Items)), nil
	case "workspace/workspaceFolders":
		return []map[string]any{{"uri": fileURI(s.root), "name": filepath.Base(s.root)}}, nil
	case "client/registerCapability", "client/unregisterCapability", "window/workDoneProgress/create", "window/showMessageRequest":
		return nil, nil
	}
	return nil, fmt.Errorf("method not supported by harness: %s", method)
}

// publish keeps uri's diagnostics when the document is open.
func (s *server) publish(uri string, version *int, items []Diagnostic) {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	if !s.open[uri] {
		return
	}
	fd := s.diags[uri]
	if fd == nil {
		fd = &fileDiags{}
		s.diags[uri] = fd
	}
	fd.version, fd.items = version, items
	fd.seq++
	close(s.changed)
	s.changed = make(chan struct{})
}

// sync gives the server path's text (didOpen, or didChange when it
// differs from what the server has) and waits for the diagnostics of that
// version: the first publish for it, then Settle without another. ok is
// false when ctx ended first (items are then what was last published).
func (s *server) sync(ctx context.Context, path, text string) (items []Diagnostic, ok bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ensureLocked(ctx); err != nil {
		return nil, false, err
	}
	uri := fileURI(path)
	s.dmu.Lock()
	var before uint64
	if fd := s.diags[uri]; fd != nil {
		before = fd.seq
	}
	s.dmu.Unlock()
	s.clock++
	d := s.docs[uri]
	switch {
	case d == nil:
		s.evictLocked(ctx)
		d = &doc{version: 1, text: text}
		s.docs[uri] = d
		s.dmu.Lock()
		s.open[uri] = true
		s.dmu.Unlock()
		err = s.conn.notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
			"uri": uri, "languageId": s.languageID(), "version": d.version, "text": text}})
	case d.text != text:
		d.version++
		d.text = text
		err = s.conn.notify(ctx, "textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": uri, "version": d.version},
			"contentChanges": []map[string]any{{"text": text}}})
	default:
		if before > 0 { // unchanged, and diagnosed already
			before--
		}
	}
	d.used = s.clock
	if err != nil {
		return nil, false, err
	}
	return s.wait(ctx, uri, d.version, before)
}

func (s *server) languageID() string {
	if s.cfg.LanguageID != "" {
		return s.cfg.LanguageID
	}
	return s.lang
}

// wait returns uri's diagnostics once a publish after before for version
// want (or without a version) has arrived and Settle passed without
// another.
func (s *server) wait(ctx context.Context, uri string, want int, before uint64) ([]Diagnostic, bool, error) {
	var settle *time.Timer
	var seen uint64
	defer func() {
		if settle != nil {
			settle.Stop()
		}
	}()
	var fire <-chan time.Time
	for {
		s.dmu.Lock()
		fd, ch := s.diags[uri], s.changed
		var items []Diagnostic
		match := false
		if fd != nil {
			items = fd.items
			match = fd.seq > before && (fd.version == nil || *fd.version >= want)
			if match && fd.seq != seen {
				seen = fd.seq
				if settle == nil {
					settle = time.NewTimer(s.m.cfg.Settle.D())
				} else {
					settle.Reset(s.m.cfg.Settle.D())
				}
				fire = settle.C
			}
		}
		s.dmu.Unlock()
		select {
		case <-ch:
		case <-fire:
			return items, true, nil
		case <-s.loopDone:
			return nil, false, fmt.Errorf("%s ended: %s", s.cfg.Command, s.lastFailure())
		case <-ctx.Done():
			return items, false, nil
		}
	}
}

// evictLocked closes the least recently used document when MaxOpenFiles
// are open.
func (s *server) evictLocked(ctx context.Context) {
	if len(s.docs) < s.m.cfg.MaxOpenFiles {
		return
	}
	var oldest string
	for uri, d := range s.docs {
		if oldest == "" || d.used < s.docs[oldest].used {
			oldest = uri
		}
	}
	delete(s.docs, oldest)
	s.dmu.Lock()
	delete(s.open, oldest)
	delete(s.diags, oldest)
	s.dmu.Unlock()
	_ = s.conn.notify(ctx, "textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": oldest}})
}

// current returns the diagnostics last published for every open document,
// by path.
func (s *server) current() map[string][]Diagnostic {
	s.dmu.Lock()
	defer s.dmu.Unlock()
	out := map[string][]Diagnostic{}
	for uri, fd := range s.diags {
		if p, ok := pathOf(uri); ok {
			out[p] = fd.items
		}
	}
	return out
}

// shutdown stops the server for good (the plugin's scope ended).
func (s *server) shutdown(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked(ctx)
	s.failed = errors.New("lsp: stopped")
}

// stopLocked ends the current process, politely when it still answers
// (shutdown, exit, stdin closed, Grace), then by terminating its range,
// and waits for the read loop and the stderr drain.
func (s *server) stopLocked(ctx context.Context) {
	if s.proc == nil {
		return
	}
	grace := s.m.cfg.Grace.D()
	select {
	case <-s.loopDone:
	default:
		cctx, cancel := context.WithTimeout(ctx, grace)
		if s.conn.call(cctx, "shutdown", nil, nil) == nil {
			_ = s.conn.notify(cctx, "exit", nil)
		}
		cancel()
	}
	_ = s.proc.Stdin().Close()
	t := time.NewTimer(grace)
	select {
	case <-s.proc.Done():
	case <-t.C:
	}
	t.Stop()
	s.proc.Terminate()
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*grace+time.Second)
	_, _ = s.proc.WaitForExit(wctx)
	cancel()
	_ = s.proc.Stdout().Close()
	_ = s.proc.Stderr().Close()
	s.wg.Wait()
	s.proc, s.conn = nil, nil
	s.docs = map[string]*doc{}
	s.dmu.Lock()
	s.open, s.diags = map[string]bool{}, map[string]*fileDiags{}
	s.dmu.Unlock()
}

// fileURI is the file: URI of an absolute path.
func fileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// pathOf is the path of a file: URI.
func pathOf(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return "", false
	}
	return filepath.FromSlash(u.Path), true
}

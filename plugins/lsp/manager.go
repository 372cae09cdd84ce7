package lsp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/subprocess"
)

// maxServers bounds the servers of one row (one per language and root).
const maxServers = 16

// serverKey names one server: a language and a workspace root.
type serverKey struct{ lang, root string }

// Manager is the lsp plugin's service: the language servers, started on
// demand, one per (language, root), and stopped when the row's scope ends.
type Manager struct {
	c   *core.Context
	cfg Config
	cwd string
	rt  *subprocess.Runtime
	log *slog.Logger

	mu      sync.Mutex
	servers map[serverKey]*server
	told    map[serverKey]bool // a given-up server was reported once
	closed  bool
}

// FileReport is the diagnostics of one file.
type FileReport struct {
	// Path is the file's absolute path.
	Path string
	// Server is the language name of the server that diagnosed it.
	Server string
	// Diagnostics are the server's, unfiltered.
	Diagnostics []Diagnostic
	// Note says why there are no diagnostics when the server did not
	// answer ("" otherwise).
	Note string
}

// languageOf is the language of path's server and its config ("" when no
// enabled server handles path's ending).
func (m *Manager) languageOf(path string) (string, ServerConfig) {
	names := make([]string, 0, len(m.cfg.Servers))
	for name := range m.cfg.Servers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := m.cfg.Servers[name]
		if s.Disabled {
			continue
		}
		for _, ext := range s.Extensions {
			if strings.HasSuffix(path, ext) {
				return name, s
			}
		}
	}
	return "", ServerConfig{}
}

// rootOf is the nearest directory above path holding one of markers, else
// the workspace when path is in it, else path's directory.
func (m *Manager) rootOf(path string, markers []string) string {
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		for _, mk := range markers {
			if _, err := os.Stat(filepath.Join(dir, mk)); err == nil {
				return dir
			}
		}
		if dir == filepath.Dir(dir) {
			break
		}
	}
	if rel, err := filepath.Rel(m.cwd, path); err == nil && !strings.HasPrefix(rel, "..") {
		return m.cwd
	}
	return filepath.Dir(path)
}

// server returns path's server (nil when no server handles path).
func (m *Manager) server(path string) (*server, error) {
	lang, cfg := m.languageOf(path)
	if lang == "" {
		return nil, nil
	}
	k := serverKey{lang, m.rootOf(path, cfg.RootMarkers)}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, errors.New("lsp: stopped")
	}
	if s := m.servers[k]; s != nil {
		return s, nil
	}
	if len(m.servers) >= maxServers {
		return nil, fmt.Errorf("lsp: %d servers run already (the limit); %s gets none", maxServers, path)
	}
	s := newServer(m, lang, cfg, k.root)
	m.servers[k] = s
	return s, nil
}

// Diagnose gives path's content (text, or the file as it is on disk when
// text is nil) to its server and returns the diagnostics of that version.
// ok is false when no server handles path or its server is not installed
// (logged once at debug) or was reported given up already.
func (m *Manager) Diagnose(ctx context.Context, path string, text *string) (rep FileReport, ok bool) {
	if ctx == nil {
		return rep, false
	}
	s, err := m.server(path)
	rep.Path = path
	if err != nil {
		m.log.Debug("lsp: "+err.Error(), "path", path)
		return rep, false
	}
	if s == nil {
		return rep, false
	}
	rep.Server = s.lang
	if text == nil {
		b, err := readBounded(path, m.cfg.MaxFileBytes)
		if err != nil {
			m.log.Debug("lsp: "+err.Error(), "path", path)
			return rep, false
		}
		t := string(b)
		text = &t
	} else if len(*text) > m.cfg.MaxFileBytes {
		return rep, false
	}
	wctx, cancel := context.WithTimeout(ctx, m.cfg.Timeout.D())
	defer cancel()
	items, done, err := s.sync(wctx, path, *text)
	switch {
	case errors.Is(err, errUnavailable):
		m.tellOnce(serverKey{s.lang, s.root}, func() { m.log.Debug("lsp: server not used: " + err.Error()) })
		return rep, false
	case errors.Is(err, errGaveUp):
		told := m.tellOnce(serverKey{s.lang, s.root}, func() { m.log.Warn("lsp: " + err.Error()) })
		if !told {
			return rep, false
		}
		rep.Note = fmt.Sprintf("the %s language server is not available: %v", s.lang, err)
		return rep, true
	case err != nil:
		rep.Note = fmt.Sprintf("the %s language server failed: %v", s.lang, err)
		return rep, true
	case !done:
		rep.Note = fmt.Sprintf("%s sent no diagnostics within %s", s.cfg.Command, m.cfg.Timeout.D())
	}
	rep.Diagnostics = items
	return rep, true
}

// tellOnce runs say the first time it is called for k and reports whether
// it did.
func (m *Manager) tellOnce(k serverKey, say func()) bool {
	m.mu.Lock()
	first := !m.told[k]
	m.told[k] = true
	m.mu.Unlock()
	if first {
		say()
	}
	return first
}

// Current returns the diagnostics last published for every open file,
// sorted by path.
func (m *Manager) Current() []FileReport {
	m.mu.Lock()
	servers := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		servers = append(servers, s)
	}
	m.mu.Unlock()
	var out []FileReport
	for _, s := range servers {
		for p, items := range s.current() {
			out = append(out, FileReport{Path: p, Server: s.lang, Diagnostics: items})
		}
	}
	slices.SortFunc(out, func(a, b FileReport) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// Running returns the language and root of every running server, sorted.
func (m *Manager) Running() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for k, s := range m.servers {
		s.mu.Lock()
		if s.conn != nil {
			out = append(out, k.lang+" "+k.root)
		}
		s.mu.Unlock()
	}
	sort.Strings(out)
	return out
}

// close stops every server and refuses new ones.
func (m *Manager) close(ctx context.Context) {
	m.mu.Lock()
	m.closed = true
	servers := m.servers
	m.servers = map[serverKey]*server{}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Add(1)
		go func() { defer wg.Done(); s.shutdown(ctx) }()
	}
	wg.Wait()
}

// readBounded reads path, refusing files over limit bytes.
func readBounded(path string, limit int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > int64(limit) {
		return nil, fmt.Errorf("%s: %d bytes, over maxFileBytes %d", path, st.Size(), limit)
	}
	b := make([]byte, 0, 4096)
	buf := make([]byte, 32<<10)
	for {
		n, err := f.Read(buf)
		b = append(b, buf[:n]...)
		if len(b) > limit {
			return nil, fmt.Errorf("%s: over maxFileBytes %d", path, limit)
		}
		if err != nil {
			break
		}
	}
	return b, nil
}

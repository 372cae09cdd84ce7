package web

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/subprocess/sandbox"
	"github.com/dshgo/harness/services/tools"
	"github.com/dshgo/harness/services/workspaces"
)

//go:embed assets
var assetsFS embed.FS

// Bounds of the file views.
const (
	filePage    = 64 << 10 // bytes of a file per request
	maxDirItems = 1000
)

var (
	// Compiled on first use: package init runs at every harness start.
	wsIDRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{16}$`) })
	// Compiled on first use: package init runs at every harness start.
	hexIDRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{16}$`) })
)

func (s *Server) routes(mux *http.ServeMux) {
	sub, _ := fs.Sub(assetsFS, "assets")
	mux.HandleFunc("GET /{$}", s.index)
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(sub)))
	mux.HandleFunc("GET /slots/{owner}/{file...}", s.slotAsset)
	mux.HandleFunc("GET /api/boot", s.boot)
	mux.HandleFunc("GET /api/workspaces", s.listWorkspaces)
	mux.HandleFunc("POST /api/workspaces", s.addWorkspace)
	mux.HandleFunc("PATCH /api/workspaces/{ws}", s.renameWorkspace)
	mux.HandleFunc("DELETE /api/workspaces/{ws}", s.removeWorkspace)
	mux.HandleFunc("GET /api/workspaces/{ws}/sessions", s.listSessions)
	mux.HandleFunc("POST /api/workspaces/{ws}/sessions", s.newSession)
	mux.HandleFunc("DELETE /api/workspaces/{ws}/sessions/{id}", s.deleteSession)
	mux.HandleFunc("GET /api/workspaces/{ws}/sessions/{id}/events", s.events)
	mux.HandleFunc("POST /api/workspaces/{ws}/sessions/{id}/prompt", s.prompt)
	mux.HandleFunc("POST /api/workspaces/{ws}/sessions/{id}/interrupt", s.interrupt)
	mux.HandleFunc("POST /api/workspaces/{ws}/sessions/{id}/approvals/{aid}", s.answerApproval)
	mux.HandleFunc("GET /api/workspaces/{ws}/files", s.files)
	s.settingsRoutes(mux)
	s.changesRoutes(mux)
}

// bootMarker is where index.html takes the first data (a JSON script
// element, which the Content Security Policy does not execute).
const bootMarker = `<script type="application/json" id="boot"></script>`

// index serves the page with the boot data inlined (what GET /api/boot
// answers, with the first workspace's sessions), so the page needs no
// request of its own before it can show the workspaces.
func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	page, err := assetsFS.ReadFile("assets/index.html")
	if err != nil {
		httpError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	var data bytes.Buffer
	enc := json.NewEncoder(&data)
	enc.SetEscapeHTML(true) // <, > and & as \u003c…: nothing can close the script element
	if err := enc.Encode(s.bootData(r.Context(), true)); err != nil {
		httpError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	before, after, _ := bytes.Cut(page, []byte(bootMarker))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	var out bytes.Buffer
	out.Grow(len(page) + data.Len())
	out.Write(before)
	out.WriteString(strings.TrimSuffix(bootMarker, "</script>"))
	out.Write(bytes.TrimSpace(data.Bytes()))
	out.WriteString("</script>")
	out.Write(after)
	_, _ = w.Write(out.Bytes())
}

func (s *Server) slotAsset(w http.ResponseWriter, r *http.Request) {
	a, ok := s.slots.assetsOf(r.PathValue("owner"))
	file := r.PathValue("file")
	if !ok || !fs.ValidPath(file) {
		httpError(w, http.StatusNotFound, "no such slot asset")
		return
	}
	http.ServeFileFS(w, r, a, file)
}

// bootInfo is what the page loads first.
type bootInfo struct {
	Workspaces []workspaces.Workspace `json:"workspaces"`
	Slots      []Component            `json:"slots"`
	Agent      bool                   `json:"agent"`
	// Sessions are the first workspace's sessions (inlined in the page
	// only; nil when there is no workspace or they could not be listed).
	Sessions []sessionInfo `json:"sessions,omitempty"`
}

// bootData is the boot information; withSessions adds the first
// workspace's sessions.
func (s *Server) bootData(ctx context.Context, withSessions bool) bootInfo {
	_, err := s.hub.agentService()
	b := bootInfo{Workspaces: s.ws.List(), Slots: s.slots.List(), Agent: err == nil}
	if withSessions && len(b.Workspaces) > 0 && b.Agent {
		if list, err := s.sessionsOf(ctx, b.Workspaces[0]); err == nil {
			b.Sessions = list
		}
	}
	return b
}

func (s *Server) boot(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.bootData(r.Context(), false))
}

func (s *Server) listWorkspaces(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.ws.List())
}

func (s *Server) addWorkspace(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Path  string `json:"path"`
		Title string `json:"title"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	if !filepath.IsAbs(body.Path) {
		httpError(w, http.StatusBadRequest, "path: %q is not an absolute directory path", body.Path)
		return
	}
	ws, err := s.ws.Add(body.Path, body.Title)
	if err != nil {
		httpError(w, http.StatusBadRequest, "%v", err)
		return
	}
	writeJSON(w, http.StatusCreated, ws)
}

// workspace resolves the {ws} path parameter (400 when malformed, 404 when
// unknown).
func (s *Server) workspace(w http.ResponseWriter, r *http.Request) (workspaces.Workspace, bool) {
	id := r.PathValue("ws")
	if !wsIDRE().MatchString(id) {
		httpError(w, http.StatusBadRequest, "workspace id %q is malformed", id)
		return workspaces.Workspace{}, false
	}
	ws, err := s.ws.Get(id)
	if err != nil {
		httpError(w, http.StatusNotFound, "%v", err)
		return workspaces.Workspace{}, false
	}
	return ws, true
}

func (s *Server) renameWorkspace(w http.ResponseWriter, r *http.Request) {
	ws, ok := s.workspace(w, r)
	if !ok {
		return
	}
	var body struct {
		Title string `json:"title"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	if err := s.ws.Rename(ws.ID, body.Title); err != nil {
		httpError(w, http.StatusBadRequest, "%v", err)
		return
	}
	ws, _ = s.ws.Get(ws.ID)
	writeJSON(w, http.StatusOK, ws)
}

func (s *Server) removeWorkspace(w http.ResponseWriter, r *http.Request) {
	ws, ok := s.workspace(w, r)
	if !ok {
		return
	}
	if err := s.ws.Remove(ws.ID); err != nil {
		httpError(w, http.StatusNotFound, "%v", err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// sessionInfo is one session in a workspace's list.
type sessionInfo struct {
	ID      string    `json:"id"`
	Title   string    `json:"title"`
	Turns   int       `json:"turns"`
	Updated time.Time `json:"updated"`
	Parent  string    `json:"parent,omitempty"`
	Origin  string    `json:"origin,omitempty"`
	Live    bool      `json:"live"`
	Running bool      `json:"running"`
}

// listSessions lists the workspace's sessions, newest first: the stored
// sessions whose header cwd is the workspace's path, plus the open ones not
// stored yet. The workspace's own list is validated against the headers.
func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) {
	ws, ok := s.workspace(w, r)
	if !ok {
		return
	}
	if _, err := s.hub.agentService(); err != nil {
		httpError(w, http.StatusServiceUnavailable, "%v", err)
		return
	}
	_ = s.ws.Touch(ws.ID)
	out, err := s.sessionsOf(r.Context(), ws)
	if err != nil {
		httpError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// sessionsOf lists ws's sessions (see listSessions) and validates the
// workspace's own list against them.
func (s *Server) sessionsOf(ctx context.Context, ws workspaces.Workspace) ([]sessionInfo, error) {
	svc, err := s.hub.agentService()
	if err != nil {
		return nil, err
	}
	page, err := svc.Sessions().List(ctx, sessions.Query{Cwd: ws.Path, Limit: 500})
	if err != nil {
		return nil, err
	}
	out := []sessionInfo{}
	seen := map[string]bool{}
	for _, i := range page.Sessions {
		l := s.hub.get(i.ID)
		out = append(out, sessionInfo{ID: i.ID, Title: i.Title, Turns: i.Turns, Updated: i.Updated, Parent: i.Parent, Origin: i.Origin, Live: l != nil, Running: l != nil && l.busy()})
		seen[i.ID] = true
	}
	for _, id := range ws.Sessions {
		if l := s.hub.get(id); l != nil && !seen[id] {
			out = append(out, sessionInfo{ID: id, Title: "(new session)", Updated: time.Now().UTC(), Live: true, Running: l.busy()})
			seen[id] = true
		}
	}
	_, _ = s.ws.Validate(ws.ID, func(id string) (string, bool) { return ws.Path, seen[id] })
	return out, nil
}

func (s *Server) newSession(w http.ResponseWriter, r *http.Request) {
	ws, ok := s.workspace(w, r)
	if !ok {
		return
	}
	var body struct {
		Fork string `json:"fork"`
	}
	if r.ContentLength != 0 && !readJSON(w, r, &body) {
		return
	}
	if body.Fork != "" {
		if _, ok := s.sessionOf(w, r, ws, body.Fork); !ok {
			return
		}
	}
	l, err := s.hub.create(r.Context(), ws.Path, body.Fork)
	if err != nil {
		httpError(w, statusOf(err), "%v", err)
		return
	}
	if err := s.ws.AddSession(ws.ID, l.id, ws.Path); err != nil {
		httpError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	writeJSON(w, http.StatusCreated, sessionInfo{ID: l.id, Title: "(new session)", Updated: time.Now().UTC(), Parent: body.Fork, Live: true})
}

// sessionOf checks the session id: well formed (400), and either open in
// this workspace or stored with the workspace's path as its cwd (404
// otherwise). It returns the session's cwd.
func (s *Server) sessionOf(w http.ResponseWriter, r *http.Request, ws workspaces.Workspace, id string) (string, bool) {
	if !sessions.ValidID(id) {
		httpError(w, http.StatusBadRequest, "session id %q is malformed", id)
		return "", false
	}
	if l := s.hub.get(id); l != nil {
		if l.cwd == ws.Path {
			return l.cwd, true
		}
		httpError(w, http.StatusNotFound, "session %s is not in this workspace", id)
		return "", false
	}
	svc, err := s.hub.agentService()
	if err != nil {
		httpError(w, http.StatusServiceUnavailable, "%v", err)
		return "", false
	}
	recs, err := svc.Sessions().Read(r.Context(), id)
	if err != nil || len(recs) == 0 {
		httpError(w, http.StatusNotFound, "session %s: not found", id)
		return "", false
	}
	h, err := sessions.ParseHeader(recs[0])
	if err != nil {
		httpError(w, http.StatusNotFound, "session %s: %v", id, err)
		return "", false
	}
	if c, err := workspaces.Canonical(h.Cwd); err != nil || c != ws.Path {
		httpError(w, http.StatusNotFound, "session %s is not in this workspace", id)
		return "", false
	}
	return ws.Path, true
}

// liveOf resolves the {ws} and {id} parameters to an open session,
// resuming it from its log when needed.
func (s *Server) liveOf(w http.ResponseWriter, r *http.Request) (*live, bool) {
	ws, ok := s.workspace(w, r)
	if !ok {
		return nil, false
	}
	id := r.PathValue("id")
	cwd, ok := s.sessionOf(w, r, ws, id)
	if !ok {
		return nil, false
	}
	l, err := s.hub.open(r.Context(), id, cwd)
	if err != nil {
		httpError(w, statusOf(err), "%v", err)
		return nil, false
	}
	return l, true
}

func statusOf(err error) int {
	switch {
	case errors.Is(err, agent.ErrSessionInUse):
		return http.StatusConflict
	case errors.Is(err, agent.ErrSessionNotFound), errors.Is(err, sessions.ErrNotFound):
		return http.StatusNotFound
	case agent.IsConfigError(err):
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) {
	ws, ok := s.workspace(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	if _, ok := s.sessionOf(w, r, ws, id); !ok {
		return
	}
	if l := s.hub.get(id); l != nil {
		if l.busy() {
			httpError(w, http.StatusConflict, "session %s is running a turn: interrupt it first", id)
			return
		}
		s.hub.drop(l)
	}
	svc, err := s.hub.agentService()
	if err != nil {
		httpError(w, http.StatusServiceUnavailable, "%v", err)
		return
	}
	if err := svc.Sessions().Delete(r.Context(), id); err != nil && !errors.Is(err, sessions.ErrNotFound) {
		httpError(w, statusOf(err), "%v", err)
		return
	}
	_ = s.ws.RemoveSession(ws.ID, id)
	w.WriteHeader(http.StatusNoContent)
}

// events streams the session's events over SSE: the backlog (the log's
// events, then this server's) after Last-Event-ID, then live events, with
// a comment line every 15 s to keep proxies from closing the stream.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	l, ok := s.liveOf(w, r)
	if !ok {
		return
	}
	l.serveSSE(w, r)
}

// serveSSE streams l's events to one watcher until the request ends or the
// watcher is dropped (it then reconnects with Last-Event-ID).
func (l *live) serveSSE(w http.ResponseWriter, r *http.Request) {
	epoch, seq, _ := strings.Cut(r.Header.Get("Last-Event-ID"), ".")
	after, _ := strconv.ParseInt(seq, 10, 64)
	backlog, sub, reset := l.subscribe(epoch, after)
	defer l.unsubscribe(sub)
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if reset {
		_, _ = io.WriteString(w, "data: "+string(encodeWebEvent(webEvent{Type: EventReset, SessionID: l.id}))+"\n\n")
	}
	for _, f := range backlog {
		writeFrame(w, l.epoch, f)
	}
	if rc.Flush() != nil {
		return
	}
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-keep.C:
			_, _ = io.WriteString(w, ": keep-alive\n\n")
		case f, ok := <-sub.ch:
			if !ok {
				return
			}
			writeFrame(w, l.epoch, f)
			for n := len(sub.ch); n > 0; n-- { // batch what is already queued
				if f, ok = <-sub.ch; !ok {
					break
				}
				writeFrame(w, l.epoch, f)
			}
		}
		if rc.Flush() != nil {
			return
		}
	}
}

// writeFrame writes f as one SSE message whose id is EPOCH.SEQ.
func writeFrame(w io.Writer, epoch string, f frame) {
	b := make([]byte, 0, len(f.data)+48)
	b = append(b, "id: "...)
	b = append(b, epoch...)
	b = append(b, '.')
	b = strconv.AppendInt(b, f.seq, 10)
	b = append(b, "\ndata: "...)
	b = append(b, f.data...)
	b = append(b, "\n\n"...)
	_, _ = w.Write(b)
}

func (s *Server) prompt(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Text string `json:"text"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	body.Text = strings.TrimSpace(body.Text)
	if body.Text == "" || len(body.Text) > maxPromptSz || !utf8.ValidString(body.Text) {
		httpError(w, http.StatusBadRequest, "text: 1 to %d bytes of UTF-8", maxPromptSz)
		return
	}
	l, ok := s.liveOf(w, r)
	if !ok {
		return
	}
	queued, err := l.prompt(body.Text)
	if err != nil { // closed, read-only (ErrReadOnly) or a full queue
		httpError(w, http.StatusConflict, "%v", err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]bool{"queued": queued})
}

func (s *Server) interrupt(w http.ResponseWriter, r *http.Request) {
	l, ok := s.liveOf(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"interrupted": l.interrupt()})
}

func (s *Server) answerApproval(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Answer string `json:"answer"` // once | always | deny
		Reason string `json:"reason"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	var out tools.ApprovalOutcome
	switch body.Answer {
	case "once":
		out = tools.ApprovalAllowedOnce
	case "always":
		out = tools.ApprovalAllowedAlways
	case "deny":
		out = tools.ApprovalRejected
	default:
		httpError(w, http.StatusBadRequest, "answer: %q is not one of once, always, deny", body.Answer)
		return
	}
	aid := r.PathValue("aid")
	if !hexIDRE().MatchString(aid) {
		httpError(w, http.StatusBadRequest, "approval id %q is malformed", aid)
		return
	}
	l, ok := s.liveOf(w, r)
	if !ok {
		return
	}
	if len(body.Reason) > 4000 {
		body.Reason = body.Reason[:4000]
	}
	if !l.answer(aid, answer{outcome: out, reason: body.Reason}) {
		httpError(w, http.StatusNotFound, "no pending approval %s", aid)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// fileEntry is one directory entry.
type fileEntry struct {
	Name string `json:"name"`
	Dir  bool   `json:"dir"`
	Size int64  `json:"size"`
}

// fileView is a directory listing or one page of a file.
type fileView struct {
	Path    string      `json:"path"`
	Dir     bool        `json:"dir"`
	Entries []fileEntry `json:"entries,omitempty"`
	More    bool        `json:"more,omitempty"` // a listing cut at maxDirItems
	Size    int64       `json:"size"`
	Offset  int64       `json:"offset"`
	Text    string      `json:"text"`
	Next    int64       `json:"next,omitempty"` // offset of the next page, 0 at the end
	Binary  bool        `json:"binary,omitempty"`
	// Hidden counts the entries of a listing left out because the
	// sandbox policy hides them (sandbox.denyRead).
	Hidden int `json:"hidden,omitempty"`
}

// files shows a directory or a page of a file of the workspace. The path
// parameter is relative to the workspace (400 when absolute or escaping
// it); the lookup goes through os.Root, so symbolic links cannot leave it.
// What the sandbox policy hides from commands (the subprocess service's
// denyRead: .env files, a hard link to a credential file) is refused
// (403) and left out of listings, counted in Hidden.
func (s *Server) files(w http.ResponseWriter, r *http.Request) {
	ws, ok := s.workspace(w, r)
	if !ok {
		return
	}
	rel := r.URL.Query().Get("path")
	if rel == "" {
		rel = "."
	}
	if !filepath.IsLocal(rel) && rel != "." {
		httpError(w, http.StatusBadRequest, "path %q is outside the workspace", rel)
		return
	}
	offset, _ := strconv.ParseInt(r.URL.Query().Get("offset"), 10, 64)
	if offset < 0 {
		httpError(w, http.StatusBadRequest, "offset: must not be negative")
		return
	}
	root, err := os.OpenRoot(ws.Path)
	if err != nil {
		httpError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	defer root.Close()
	f, err := root.Open(rel)
	if err != nil {
		code := http.StatusNotFound
		if !errors.Is(err, fs.ErrNotExist) {
			code = http.StatusBadRequest // os.Root refuses an escape through a link
		}
		httpError(w, code, "%s: %v", rel, unwrapPath(err))
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		httpError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	check := s.checker(ws.Path)
	if err := check.Read(filepath.Join(ws.Path, rel)); err != nil {
		httpError(w, http.StatusForbidden, "%s: %v", rel, err)
		return
	}
	v := fileView{Path: path.Clean(filepath.ToSlash(rel)), Dir: st.IsDir(), Size: st.Size(), Offset: offset}
	if st.IsDir() {
		s.listDir(r.Context(), f, &v)
		v.Entries = slices.DeleteFunc(v.Entries, func(e fileEntry) bool {
			hide := check.Hidden(filepath.Join(ws.Path, rel, e.Name))
			if hide {
				v.Hidden++
			}
			return hide
		})
		writeJSON(w, http.StatusOK, v)
		return
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		httpError(w, http.StatusBadRequest, "%v", err)
		return
	}
	buf := make([]byte, filePage)
	n, _ := io.ReadFull(f, buf)
	buf = buf[:n]
	v.Binary = slices.Contains(buf, 0) || (!utf8.Valid(buf) && n < filePage)
	if !v.Binary {
		v.Text = strings.ToValidUTF8(string(buf), "\uFFFD")
	}
	if end := offset + int64(n); end < st.Size() {
		v.Next = end
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) listDir(_ context.Context, f *os.File, v *fileView) {
	ents, err := f.ReadDir(maxDirItems + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return
	}
	if len(ents) > maxDirItems {
		ents, v.More = ents[:maxDirItems], true
	}
	for _, e := range ents {
		fe := fileEntry{Name: e.Name(), Dir: e.IsDir()}
		if info, err := e.Info(); err == nil && !e.IsDir() {
			fe.Size = info.Size()
		}
		v.Entries = append(v.Entries, fe)
	}
	slices.SortFunc(v.Entries, func(a, b fileEntry) int {
		if a.Dir != b.Dir {
			if a.Dir {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// checker is the sandbox policy's checker for a workspace: the
// subprocess service's default policy, or nothing refused without one.
func (s *Server) checker(workspace string) *sandbox.Checker {
	var p sandbox.Policy
	if rt, ok := core.Lookup(s.c, subprocess.Key); ok {
		p = rt.SandboxPolicy()
	}
	return sandbox.NewChecker(p, workspace)
}

// unwrapPath drops the absolute workspace path from an os.Root error.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

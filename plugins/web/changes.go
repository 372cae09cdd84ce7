package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/checkpoints"
	"github.com/dshgo/harness/services/sessions"
)

// The changes panel and rewind read the checkpoints the checkpoint plugin
// takes (services/checkpoints, in the state directory `harness rewind`
// reads), never the plugin itself.
//
//	GET  …/sessions/{id}/changes      the files changed since the session's first checkpoint, and its prompts
//	GET  …/sessions/{id}/rewind/{n}   what rewinding the files to checkpoint n would do, with diffs
//	POST …/sessions/{id}/rewind       {checkpoint, what: code|conversation|both, force}

// Bounds of the changes views.
const (
	maxChangedFiles = 200      // files the changes panel lists
	maxPanelLines   = 400      // lines of one file's diff in the panel
	maxPreviewDiffs = 8        // files a rewind preview shows a diff of (as /rewind)
	maxPreviewLines = 60       // lines of one file's diff in a preview (as /rewind)
	maxPrompts      = 50       // prompts the panel offers to rewind to
	maxDiffBytes    = 64 << 10 // bytes of one diff in the panel or a preview
	maxPanelBytes   = 2 << 20  // bytes of all the panel's diffs; later files are listed without one
)

// changedFile is one file of the changes panel.
type changedFile struct {
	Path string `json:"path"`
	// Status is added, modified or deleted (since the first checkpoint).
	Status  string `json:"status"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	// Diff is the unified diff from the first checkpoint to now; empty
	// for a file that is not small text (Binary).
	Diff   string `json:"diff,omitempty"`
	Binary bool   `json:"binary,omitempty"`
	// Cut: the diff was left out, the panel's diffs being over their
	// bound (the counts are still right).
	Cut bool `json:"cut,omitempty"`
}

// rewindPoint is a prompt one can rewind to: its checkpoint, taken just
// before the prompt.
type rewindPoint struct {
	Checkpoint int       `json:"checkpoint"`
	Turn       int       `json:"turn"`
	Time       time.Time `json:"time"`
	Prompt     string    `json:"prompt"`
	// Paths counts the paths rewinding the files would change, from the
	// state the agent last left (as /rewind lists it).
	Paths int `json:"paths"`
}

// changesView is GET …/changes.
type changesView struct {
	// Checkpoints is false when the session has no checkpoint (the
	// checkpoint plugin is off, or no prompt was sent yet).
	Checkpoints bool          `json:"checkpoints"`
	Since       int           `json:"since,omitempty"` // the checkpoint the files are compared with
	Files       []changedFile `json:"files"`
	More        bool          `json:"more,omitempty"` // files beyond maxChangedFiles left out
	Prompts     []rewindPoint `json:"prompts"`        // newest first
}

// previewChange is one path of a rewind preview.
type previewChange struct {
	checkpoints.Change
	// Diff is from the file now back to the checkpoint's (as /rewind N).
	Diff string `json:"diff,omitempty"`
}

// rewindPreview is GET …/rewind/{n}.
type rewindPreview struct {
	rewindPoint
	Changes []previewChange `json:"changes"`
	Refused []string        `json:"refused,omitempty"`
}

// rewindResult is POST …/rewind's answer.
type rewindResult struct {
	Restored     []string `json:"restored"`
	Conversation bool     `json:"conversation"`
	// Draft is the prompt rewound away (the page puts it in the input).
	Draft string `json:"draft,omitempty"`
	Text  string `json:"text"`
}

// refusedError is POST …/rewind's 409 body when paths changed since the
// agent's last checkpoint and force was not set.
type refusedError struct {
	Error   string   `json:"error"`
	Refused []string `json:"refused"`
}

func (s *Server) changesRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/workspaces/{ws}/sessions/{id}/changes", s.changes)
	mux.HandleFunc("GET /api/workspaces/{ws}/sessions/{id}/rewind/{n}", s.rewindPreview)
	mux.HandleFunc("POST /api/workspaces/{ws}/sessions/{id}/rewind", s.rewind)
}

// sessionCheckpoints resolves {ws} and {id} and opens the workspace's
// checkpoint store; the store is nil (and ok true) when the workspace has
// none.
func (s *Server) sessionCheckpoints(w http.ResponseWriter, r *http.Request) (store *checkpoints.Store, list []*checkpoints.Checkpoint, ok bool) {
	ws, ok := s.workspace(w, r)
	if !ok {
		return nil, nil, false
	}
	cwd, ok := s.sessionOf(w, r, ws, r.PathValue("id"))
	if !ok {
		return nil, nil, false
	}
	state := sessions.DefaultStateDir(nil)
	dir, err := checkpoints.Dir(state, cwd)
	if err == nil {
		_, err = os.Stat(dir)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, true
	}
	if err == nil {
		store, err = checkpoints.Open(state, cwd, checkpoints.Limits{})
	}
	if err == nil {
		list, err = store.List()
	}
	if err != nil {
		httpError(w, http.StatusInternalServerError, "checkpoints: %v", err)
		return nil, nil, false
	}
	return store, list, true
}

// changes lists the files that differ from the session's first
// checkpoint, with a diff each, and the session's prompts to rewind to.
func (s *Server) changes(w http.ResponseWriter, r *http.Request) {
	store, list, ok := s.sessionCheckpoints(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	v := changesView{Files: []changedFile{}, Prompts: []rewindPoint{}}
	first := firstOf(list, id)
	if store == nil || first == nil {
		writeJSON(w, http.StatusOK, v)
		return
	}
	v.Checkpoints, v.Since = true, first.ID
	plan, err := store.Plan(r.Context(), first, nil)
	if err != nil {
		httpError(w, http.StatusInternalServerError, "checkpoints: %v", err)
		return
	}
	budget := maxPanelBytes
	for _, c := range plan.Changes {
		if len(v.Files) == maxChangedFiles {
			v.More = true
			break
		}
		if f, ok := changedFileOf(store, first, c); ok {
			if budget -= len(f.Diff); budget < 0 {
				f.Diff, f.Cut = "", true
			}
			v.Files = append(v.Files, f)
		}
	}
	v.Prompts = promptsOf(list, id)
	writeJSON(w, http.StatusOK, v)
}

// changedFileOf describes change c (from now back to first) the other
// way round: what happened to the file since first. Directories are left
// out (ok false): their files are listed.
func changedFileOf(store *checkpoints.Store, first *checkpoints.Checkpoint, c checkpoints.Change) (changedFile, bool) {
	e, before := first.Entries[c.Path]
	fi, err := os.Lstat(filepath.Join(store.Workspace(), filepath.FromSlash(c.Path)))
	now := err == nil
	if (before && e.Kind == checkpoints.KindDir) || (now && fi.IsDir()) {
		return changedFile{}, false
	}
	f := changedFile{Path: c.Path, Status: "modified"}
	switch {
	case !before:
		f.Status = "added"
	case !now:
		f.Status = "deleted"
	}
	then, cur, ok := store.Sides(first, c.Path)
	if !ok {
		f.Binary = true
		return f, true
	}
	d := checkpoints.UnifiedDiff("a/"+c.Path, "b/"+c.Path, then, cur, 0)
	f.Added, f.Removed = checkpoints.DiffStat(d)
	f.Diff = clipDiff(d, maxPanelLines, maxDiffBytes)
	return f, true
}

// firstOf is the oldest checkpoint of session in list, or nil.
func firstOf(list []*checkpoints.Checkpoint, session string) *checkpoints.Checkpoint {
	for _, c := range list {
		if c.Meta.Session == session {
			return c
		}
	}
	return nil
}

// promptsOf lists the session's prompt checkpoints, newest first.
func promptsOf(list []*checkpoints.Checkpoint, session string) []rewindPoint {
	latest := checkpoints.Latest(list, session, "")
	out := []rewindPoint{}
	for i := len(list) - 1; i >= 0 && len(out) < maxPrompts; i-- {
		if c := list[i]; c.Meta.Session == session && c.Meta.Reason == checkpoints.ReasonPrompt {
			out = append(out, pointOf(c, latest))
		}
	}
	return out
}

func pointOf(c, latest *checkpoints.Checkpoint) rewindPoint {
	return rewindPoint{Checkpoint: c.ID, Turn: c.Meta.Turn, Time: c.Time, Prompt: c.Meta.Prompt,
		Paths: len(checkpoints.Differing(c, latest))}
}

// promptCheckpoint finds checkpoint n among the session's prompt
// checkpoints (404 otherwise).
func promptCheckpoint(w http.ResponseWriter, list []*checkpoints.Checkpoint, session string, n int) (*checkpoints.Checkpoint, bool) {
	for _, c := range list {
		if c.ID == n && c.Meta.Session == session && c.Meta.Reason == checkpoints.ReasonPrompt {
			return c, true
		}
	}
	httpError(w, http.StatusNotFound, "checkpoint: no prompt checkpoint %d of session %s", n, session)
	return nil, false
}

// rewindPreview is what restoring the files to checkpoint n would do: the
// same plan and diffs as /rewind N.
func (s *Server) rewindPreview(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n <= 0 {
		httpError(w, http.StatusBadRequest, "checkpoint: %q is not a checkpoint number", r.PathValue("n"))
		return
	}
	store, list, ok := s.sessionCheckpoints(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	if store == nil {
		httpError(w, http.StatusNotFound, "checkpoint: no checkpoint of session %s", id)
		return
	}
	to, ok := promptCheckpoint(w, list, id, n)
	if !ok {
		return
	}
	latest := checkpoints.Latest(list, id, "")
	plan, err := store.Plan(r.Context(), to, latest)
	if err != nil {
		httpError(w, http.StatusInternalServerError, "checkpoints: %v", err)
		return
	}
	v := rewindPreview{rewindPoint: pointOf(to, latest), Changes: []previewChange{}, Refused: plan.Refused()}
	diffs := 0
	for _, c := range plan.Changes {
		pc := previewChange{Change: c}
		if then, now, ok := store.Sides(to, c.Path); ok && diffs < maxPreviewDiffs {
			if pc.Diff = clipDiff(checkpoints.UnifiedDiff("now/"+c.Path, "then/"+c.Path, now, then, 0), maxPreviewLines, maxDiffBytes); pc.Diff != "" {
				diffs++
			}
		}
		v.Changes = append(v.Changes, pc)
	}
	writeJSON(w, http.StatusOK, v)
}

// rewind restores the files to a prompt checkpoint (code), takes the
// conversation back to before that prompt (conversation), or both, files
// first. As /rewind: when paths changed since the agent's last checkpoint
// nothing is restored (409 naming them) unless force is set; a running
// turn is refused (409).
func (s *Server) rewind(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Checkpoint int    `json:"checkpoint"`
		What       string `json:"what"`
		Force      bool   `json:"force"`
	}
	if !readJSON(w, r, &body) {
		return
	}
	if body.What != "code" && body.What != "conversation" && body.What != "both" {
		httpError(w, http.StatusBadRequest, "what: %q is not one of code, conversation, both", body.What)
		return
	}
	store, list, ok := s.sessionCheckpoints(w, r)
	if !ok {
		return
	}
	id := r.PathValue("id")
	if store == nil {
		httpError(w, http.StatusNotFound, "checkpoint: no checkpoint of session %s", id)
		return
	}
	to, ok := promptCheckpoint(w, list, id, body.Checkpoint)
	if !ok {
		return
	}
	var l *live
	if body.What != "code" {
		if l, ok = s.rewindable(w, r, to); !ok {
			return
		}
	} else if l = s.hub.get(id); l != nil && l.busy() {
		httpError(w, http.StatusConflict, "session %s is running a turn: stop it first", id)
		return
	}
	res := rewindResult{Restored: []string{}}
	if body.What != "conversation" && !s.rewindFiles(w, r, store, to, body.Force, &res) {
		return
	}
	if body.What == "code" {
		res.Text += " The conversation is unchanged."
		writeJSON(w, http.StatusOK, res)
		return
	}
	if err := s.hub.rewindConversation(r.Context(), l, to.Meta.Turn); err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, agent.ErrBusy) || errors.Is(err, agent.ErrTurnNotInView) {
			code = http.StatusConflict
		}
		httpError(w, code, "%s", strings.TrimSpace(res.Text+" The conversation was not rewound: "+err.Error()))
		return
	}
	res.Conversation, res.Draft = true, to.Meta.Prompt
	res.Text = strings.TrimSpace(res.Text + " The conversation is back to before the prompt " + strconv.Quote(excerpt(to.Meta.Prompt, 60)) + "; the prompt is in the input.")
	writeJSON(w, http.StatusOK, res)
}

// rewindable opens the session for a conversation rewind: one this
// server runs, idle, and a checkpoint that names its turn.
func (s *Server) rewindable(w http.ResponseWriter, r *http.Request, to *checkpoints.Checkpoint) (*live, bool) {
	if to.Meta.Turn <= 0 {
		httpError(w, http.StatusConflict, "checkpoint %d does not say which turn it came before (an older harness took it): rewind the files alone", to.ID)
		return nil, false
	}
	l, ok := s.liveOf(w, r)
	if !ok {
		return nil, false
	}
	switch {
	case l.ss == nil:
		httpError(w, http.StatusConflict, "the session is read-only here (%s): its conversation cannot be rewound", l.readOnly)
		return nil, false
	case l.busy():
		httpError(w, http.StatusConflict, "session %s is running a turn: stop it first", l.id)
		return nil, false
	}
	return l, true
}

// rewindFiles restores the files to checkpoint to, filling res; false
// when it answered the request (refused: 409 with the paths; an error).
func (s *Server) rewindFiles(w http.ResponseWriter, r *http.Request, store *checkpoints.Store, to *checkpoints.Checkpoint, force bool, res *rewindResult) bool {
	done, err := store.Rewind(r.Context(), to, force)
	var refused *checkpoints.RefusedError
	switch {
	case errors.As(err, &refused):
		writeJSON(w, http.StatusConflict, refusedError{Refused: refused.Paths,
			Error: "nothing was restored: " + strconv.Itoa(len(refused.Paths)) + " path(s) changed since the agent's last checkpoint, by someone else: " + strings.Join(refused.Paths, ", ") + " (force overwrites them)"})
		return false
	case err != nil && !errors.Is(err, checkpoints.ErrNotRecorded):
		httpError(w, http.StatusInternalServerError, "rewind: %v", err)
		return false
	}
	if len(done) == 0 {
		res.Text = "The files already match checkpoint " + strconv.Itoa(to.ID) + "."
		return true
	}
	res.Restored = done
	res.Text = "Restored " + strconv.Itoa(len(done)) + " path(s) to checkpoint " + strconv.Itoa(to.ID) + ": " + strings.Join(done, ", ") + "."
	return true
}

// rewindConversation takes l's conversation back to before turn, then
// redraws its transcript from the log: the backlog is rebuilt under a new
// epoch and the watchers are let go, so they reconnect and get a reset
// and the rewound transcript. Prompts are refused until it is done (a
// turn's events must not land in the backlog being rebuilt); a running
// turn makes it fail with agent.ErrBusy.
func (h *hub) rewindConversation(ctx context.Context, l *live, turn int) error {
	l.mu.Lock()
	if l.running || l.rewinding {
		l.mu.Unlock()
		return agent.ErrBusy
	}
	l.rewinding = true
	l.mu.Unlock()
	defer func() { l.mu.Lock(); l.rewinding = false; l.mu.Unlock() }()
	if err := l.ss.RewindConversation(ctx, turn); err != nil {
		return err
	}
	recs, err := agent.ReadSession(ctx, l.svc.Sessions(), l.id)
	if err != nil {
		return err
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	l.mu.Lock()
	l.epoch, l.buf = hex.EncodeToString(b[:]), nil
	for s := range l.subs {
		close(s.ch)
		delete(l.subs, s)
	}
	l.mu.Unlock()
	h.replay(ctx, l, l.id, recs)
	l.publishFigures()
	return nil
}

// clipDiff cuts diff d to its first lines lines and at most n bytes (at a
// line's end, or inside a line longer than n), saying what was left out.
func clipDiff(d string, lines, n int) string {
	var b strings.Builder
	i, total := 0, strings.Count(d, "\n")
	for line := range strings.Lines(d) {
		if i == lines || b.Len()+len(line) > n {
			if i == 0 {
				b.WriteString(line[:min(len(line), n)] + "…\n")
				i++
			}
			fmt.Fprintf(&b, "… %d more lines\n", total-i)
			break
		}
		b.WriteString(line)
		i++
	}
	return b.String()
}

// excerpt is the first line of s, cut to n runes.
func excerpt(s string, n int) string {
	s, _, cut := strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	} else if cut {
		return s + "…"
	}
	return s
}

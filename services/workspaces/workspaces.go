package workspaces

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Errors of the service.
var (
	// ErrNotFound: no workspace has the id.
	ErrNotFound = errors.New("no such workspace")
	// ErrWrongWorkspace: a session's working directory is not the
	// workspace's path.
	ErrWrongWorkspace = errors.New("the session does not belong to this workspace")
)

// MaxTitle bounds a workspace title (runes).
const MaxTitle = 200

// Workspace is one directory the user works in.
type Workspace struct {
	// ID is stable for a path: the first 16 hex digits of the SHA-256 of
	// the canonical path.
	ID string `json:"id"`
	// Path is the canonical path: absolute, cleaned, symlinks resolved.
	Path string `json:"path"`
	// Title is the user's name for it (default: the path's last element).
	Title string `json:"title"`
	// Sessions are the workspace's session ids, oldest first.
	Sessions []string `json:"sessions"`
	// Created and LastUsed are set by Add and Touch.
	Created  time.Time `json:"created"`
	LastUsed time.Time `json:"lastUsed"`
}

// Service keeps the workspaces of one state directory. Safe for concurrent
// use within a process; two processes sharing a state directory keep the
// last writer's list.
type Service struct {
	file string

	mu  sync.Mutex
	all []Workspace
}

// fileName is the record's name under the state directory.
const fileName = "workspaces.json"

// New opens (or starts) the record under stateDir. A missing file is an
// empty list; a file that does not decode is an error naming it.
func New(stateDir string) (*Service, error) {
	s := &Service{file: filepath.Join(stateDir, fileName)}
	b, err := os.ReadFile(s.file)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("workspaces: %w", err)
	}
	if err := json.Unmarshal(b, &s.all); err != nil {
		return nil, fmt.Errorf("workspaces: %s: %w", s.file, err)
	}
	return s, nil
}

// File returns the path of the record.
func (s *Service) File() string { return s.file }

// Canonical returns the canonical form of a directory path: absolute,
// cleaned, symlinks resolved. It fails when path is not a directory.
func Canonical(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is not a directory", path)
	}
	return real, nil
}

// IDOf returns the id of the workspace at canonical path p.
func IDOf(p string) string {
	sum := sha256.Sum256([]byte(p))
	return hex.EncodeToString(sum[:8])
}

// List returns the workspaces, the last used first.
func (s *Service) List() []Workspace {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Workspace, len(s.all))
	for i, w := range s.all {
		out[i] = clone(w)
	}
	slices.SortStableFunc(out, func(a, b Workspace) int { return b.LastUsed.Compare(a.LastUsed) })
	return out
}

// Get returns the workspace id.
func (s *Service) Get(id string) (Workspace, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.indexLocked(id)
	if i < 0 {
		return Workspace{}, fmt.Errorf("workspace %q: %w", id, ErrNotFound)
	}
	return clone(s.all[i]), nil
}

// Add records the directory path (made canonical) with title (empty: the
// directory's name) and makes it the last used. Adding a recorded path
// returns its workspace (retitled when title is set).
func (s *Service) Add(path, title string) (Workspace, error) {
	p, err := Canonical(path)
	if err != nil {
		return Workspace{}, fmt.Errorf("workspace path: %w", err)
	}
	title, err = cleanTitle(title)
	if err != nil {
		return Workspace{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now().UTC()
	id := IDOf(p)
	if i := s.indexLocked(id); i >= 0 {
		if title != "" {
			s.all[i].Title = title
		}
		s.all[i].LastUsed = now
		return clone(s.all[i]), s.saveLocked()
	}
	if title == "" {
		title = filepath.Base(p)
	}
	w := Workspace{ID: id, Path: p, Title: title, Sessions: []string{}, Created: now, LastUsed: now}
	s.all = append(s.all, w)
	if err := s.saveLocked(); err != nil {
		s.all = s.all[:len(s.all)-1]
		return Workspace{}, err
	}
	return clone(w), nil
}

// Remove forgets workspace id (its directory and sessions stay).
func (s *Service) Remove(id string) error {
	return s.change(id, func(i int) { s.all = slices.Delete(s.all, i, i+1) })
}

// Rename sets the title of workspace id (1 to MaxTitle runes, one line).
func (s *Service) Rename(id, title string) error {
	t, err := cleanTitle(title)
	if err != nil {
		return err
	}
	if t == "" {
		return errors.New("title: empty")
	}
	return s.change(id, func(i int) { s.all[i].Title = t })
}

// Touch makes workspace id the last used.
func (s *Service) Touch(id string) error {
	return s.change(id, func(i int) { s.all[i].LastUsed = time.Now().UTC() })
}

// AddSession appends session to workspace id's list (once) after checking
// that the session's working directory cwd is the workspace's path
// (ErrWrongWorkspace otherwise).
func (s *Service) AddSession(id, session, cwd string) error {
	w, err := s.Get(id)
	if err != nil {
		return err
	}
	if c, err := Canonical(cwd); err != nil || c != w.Path {
		return fmt.Errorf("session %s (cwd %s) in workspace %s: %w", session, cwd, w.Path, ErrWrongWorkspace)
	}
	return s.change(id, func(i int) {
		if !slices.Contains(s.all[i].Sessions, session) {
			s.all[i].Sessions = append(s.all[i].Sessions, session)
		}
		s.all[i].LastUsed = time.Now().UTC()
	})
}

// RemoveSession drops session from workspace id's list.
func (s *Service) RemoveSession(id, session string) error {
	return s.change(id, func(i int) {
		s.all[i].Sessions = slices.DeleteFunc(s.all[i].Sessions, func(x string) bool { return x == session })
	})
}

// Validate keeps in workspace id's list only the sessions whose working
// directory, as cwdOf reads it from the session's header, is the
// workspace's path; a session cwdOf cannot read (ok false) is dropped too.
// It returns the workspace as saved.
func (s *Service) Validate(id string, cwdOf func(session string) (cwd string, ok bool)) (Workspace, error) {
	w, err := s.Get(id)
	if err != nil {
		return Workspace{}, err
	}
	keep := w.Sessions[:0:0]
	for _, sid := range w.Sessions {
		if cwd, ok := cwdOf(sid); ok {
			if c, err := Canonical(cwd); err == nil && c == w.Path {
				keep = append(keep, sid)
			}
		}
	}
	if len(keep) == len(w.Sessions) {
		return w, nil
	}
	err = s.change(id, func(i int) { s.all[i].Sessions = keep })
	w.Sessions = keep
	return w, err
}

// change applies fn to workspace id's index and saves; on a failed save
// the previous list is restored.
func (s *Service) change(id string, fn func(i int)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.indexLocked(id)
	if i < 0 {
		return fmt.Errorf("workspace %q: %w", id, ErrNotFound)
	}
	prev := make([]Workspace, len(s.all))
	for j, w := range s.all {
		prev[j] = clone(w)
	}
	fn(i)
	if err := s.saveLocked(); err != nil {
		s.all = prev
		return err
	}
	return nil
}

func (s *Service) indexLocked(id string) int {
	return slices.IndexFunc(s.all, func(w Workspace) bool { return w.ID == id })
}

// saveLocked writes the list atomically: 0600 in a 0700 directory.
func (s *Service) saveLocked() error {
	b, err := json.MarshalIndent(s.all, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(s.file)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("workspaces: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".workspaces-*.json")
	if err != nil {
		return fmt.Errorf("workspaces: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("workspaces: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("workspaces: %w", err)
	}
	if err := os.Rename(tmp.Name(), s.file); err != nil {
		return fmt.Errorf("workspaces: %w", err)
	}
	return nil
}

func cleanTitle(t string) (string, error) {
	t = strings.TrimSpace(t)
	if strings.ContainsAny(t, "\r\n") {
		return "", errors.New("title: must be one line")
	}
	if n := len([]rune(t)); n > MaxTitle {
		return "", fmt.Errorf("title: %d runes, at most %d", n, MaxTitle)
	}
	return t, nil
}

func clone(w Workspace) Workspace {
	w.Sessions = slices.Clone(w.Sessions)
	if w.Sessions == nil {
		w.Sessions = []string{}
	}
	return w
}

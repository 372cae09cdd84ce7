package tui

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// maxHistory bounds the entries kept per working directory.
const maxHistory = 1000

// history is the prompt history of one working directory, persisted as
// JSON lines (one string per entry, oldest first) in a private file.
type history struct {
	path    string // "" keeps it in memory only
	entries []string
	pos     int    // browsing position: len(entries) when not browsing
	draft   string // the input before browsing started
	lines   int    // lines in the file
}

// historyPath is the history file of cwd under stateDir:
// stateDir/history/<sha256(cwd)[:16]>.jsonl.
func historyPath(stateDir, cwd string) string {
	sum := sha256.Sum256([]byte(cwd))
	return filepath.Join(stateDir, "history", hex.EncodeToString(sum[:8])+".jsonl")
}

// loadHistory reads path (a missing file is an empty history; unreadable
// lines are skipped).
func loadHistory(path string) *history {
	h := &history{path: path}
	if path == "" {
		return h
	}
	f, err := os.Open(path)
	if err != nil {
		return h
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	for sc.Scan() {
		h.lines++
		var s string
		if json.Unmarshal(sc.Bytes(), &s) == nil && s != "" {
			h.entries = append(h.entries, s)
		}
	}
	if len(h.entries) > maxHistory {
		h.entries = h.entries[len(h.entries)-maxHistory:]
	}
	h.pos = len(h.entries)
	return h
}

// add appends s (unless it repeats the last entry) and persists it: the
// directory is created 0700 and the file 0600; the file is rewritten when it
// holds twice the limit.
func (h *history) add(s string) error {
	h.pos = len(h.entries)
	if strings.TrimSpace(s) == "" || (len(h.entries) > 0 && h.entries[len(h.entries)-1] == s) {
		return nil
	}
	h.entries = append(h.entries, s)
	if len(h.entries) > maxHistory {
		h.entries = h.entries[len(h.entries)-maxHistory:]
	}
	h.pos = len(h.entries)
	if h.path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	line, _ := json.Marshal(s)
	f, err := os.OpenFile(h.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	_, werr := f.Write(append(line, '\n'))
	cerr := f.Close()
	if werr != nil || cerr != nil {
		return fmt.Errorf("history: write %s: %v %v", h.path, werr, cerr)
	}
	if h.lines++; h.lines >= 2*maxHistory {
		h.lines = len(h.entries)
		return h.compact()
	}
	return nil
}

// compact rewrites the file with the kept entries (atomically).
func (h *history) compact() error {
	var b strings.Builder
	for _, e := range h.entries {
		line, _ := json.Marshal(e)
		b.Write(line)
		b.WriteByte('\n')
	}
	tmp := h.path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	return os.Rename(tmp, h.path)
}

// prev moves to the previous entry; current is the input now (kept as the
// draft when browsing starts). ok is false at the oldest entry.
func (h *history) prev(current string) (string, bool) {
	if h.pos == 0 {
		return "", false
	}
	if h.pos == len(h.entries) {
		h.draft = current
	}
	h.pos--
	return h.entries[h.pos], true
}

// next moves to the next entry, or back to the draft.
func (h *history) next() (string, bool) {
	if h.pos >= len(h.entries) {
		return "", false
	}
	h.pos++
	if h.pos == len(h.entries) {
		return h.draft, true
	}
	return h.entries[h.pos], true
}

// search returns the newest entry older than before (an index; -1 for
// the newest) containing q, and its index; -1 when none.
func (h *history) search(q string, before int) (string, int) {
	if before < 0 || before > len(h.entries) {
		before = len(h.entries)
	}
	for i := before - 1; i >= 0; i-- {
		if strings.Contains(h.entries[i], q) {
			return h.entries[i], i
		}
	}
	return "", -1
}

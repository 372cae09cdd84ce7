package agent

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/tools"
)

// JournalVersion is the version of the session log format, carried by the
// header record.
const JournalVersion = 1

// Record types of the session log.
const (
	RecordSession    = "session"     // header: id, cwd, model, time (first line)
	RecordUser       = "user"        // a user message (the prompt, or plugin-sourced context when Source is set)
	RecordAssistant  = "assistant"   // the assistant message of one step: text, reasoning, tool calls
	RecordToolCall   = "tool/call"   // a tool call about to run: callId, name, raw arguments
	RecordToolResult = "tool/result" // its result: the tool message, isError, error info, meta
	RecordUsage      = "usage"       // provider-reported (or estimated) usage of one model call
	RecordState      = "state"       // a plugin's keyed session state (key, state), e.g. the todo list; the last value of a key wins
)

// Record is one line of a session log. Type says which fields are set.
// Records with a Message rebuild the conversation on replay, in file order.
type Record struct {
	Type string    `json:"type"`
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`

	// Header fields (RecordSession).
	V     int    `json:"v,omitempty"`
	ID    string `json:"id,omitempty"`
	Cwd   string `json:"cwd,omitempty"`
	Model string `json:"model,omitempty"`

	// Turn is the 1-based user turn, Step the 1-based model call within it.
	Turn int `json:"turn,omitempty"`
	Step int `json:"step,omitempty"`

	// Message is the conversation entry (user, assistant, tool/result).
	Message *llm.Message `json:"message,omitempty"`
	// Source names the plugin that authored a user message that did not
	// come from the user (runtime context, additional contexts, hooks).
	Source string `json:"source,omitempty"`
	// Aborted marks an assistant message cut short by cancellation.
	Aborted bool `json:"aborted,omitempty"`

	// Tool call and result fields. The canonical tool value is never
	// persisted (dsh A13): replay reproduces what the model saw.
	CallID    string           `json:"callId,omitempty"`
	Name      string           `json:"name,omitempty"`
	Arguments string           `json:"arguments,omitempty"`
	Content   []tools.Content  `json:"content,omitempty"`
	IsError   bool             `json:"isError,omitempty"`
	Error     *tools.ErrorInfo `json:"error,omitempty"`
	Meta      json.RawMessage  `json:"meta,omitempty"`

	// State fields (RecordState): Key names the state, State is its new
	// JSON value.
	Key   string          `json:"key,omitempty"`
	State json.RawMessage `json:"state,omitempty"`

	// Usage fields (RecordUsage). Estimated is true when the stream carried
	// no usage and the figures are the harness's own estimate.
	Usage     *llm.Usage `json:"usage,omitempty"`
	Estimated bool       `json:"estimated,omitempty"`
}

// ErrSessionNotFound is returned when resuming an id that has no log.
var ErrSessionNotFound = errors.New("session not found")

var sessionIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$`)

// ValidSessionID reports whether id can name a session log: letters,
// digits, '-' and '_', at most 128 bytes. Ids never become paths otherwise.
func ValidSessionID(id string) bool { return sessionIDRE.MatchString(id) }

// NewSessionID returns a fresh id that sorts by creation time:
// "20261130T010203-" followed by 8 random hex digits.
func NewSessionID(now time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}

// Journal is the append-only JSONL log of one session: one JSON record per
// line, each written with a single write(2) on a file opened O_APPEND, so a
// crash can at worst leave a torn final line; earlier lines are never
// rewritten. An open Journal holds an exclusive advisory lock (flock) on
// its file, so one session is written by one Journal at a time; opening a
// log for appending drops a torn tail under that lock. Readers
// ([ReadJournal], [ListSessions]) take no lock. Files are 0600 in 0700
// directories. Safe for concurrent use.
type Journal struct {
	mu   sync.Mutex
	f    *os.File
	path string
	seq  int64
	err  error
}

// SessionsDir returns the directory of session logs under stateDir.
func SessionsDir(stateDir string) string { return filepath.Join(stateDir, "sessions") }

// SessionPath returns the log file of session id under stateDir.
func SessionPath(stateDir, id string) string {
	return filepath.Join(SessionsDir(stateDir), id+".jsonl")
}

// ErrSessionInUse is matched (errors.Is) by a [*SessionInUseError].
var ErrSessionInUse = errors.New("session is in use")

// SessionInUseError is returned when a session's log is held by another
// open session: another harness process, or another [Service.Open] (or
// [OpenJournal]) in this one. Nothing was read or written.
type SessionInUseError struct {
	ID   string // the session id
	Path string // its log file
	PID  int    // the holder's process id when known (Linux: /proc/locks), else 0
}

// Error names the session, the holder and the log file.
func (e *SessionInUseError) Error() string {
	switch {
	case e.PID != 0 && e.PID == os.Getpid():
		return fmt.Sprintf("session %s is already open in this harness process (pid %d; log %s)", e.ID, e.PID, e.Path)
	case e.PID != 0:
		return fmt.Sprintf("session %s is in use by another harness process (pid %d; log %s)", e.ID, e.PID, e.Path)
	}
	return fmt.Sprintf("session %s is in use by another harness process (log %s)", e.ID, e.Path)
}

// Is reports whether target is [ErrSessionInUse].
func (e *SessionInUseError) Is(target error) bool { return target == ErrSessionInUse }

// lockJournal takes an exclusive advisory lock (flock) on f, the log of
// session id, without waiting. The lock belongs to f's open file
// description: it conflicts with every other open of the file, in this
// process or another, and it is released when f is closed or the process
// dies.
func lockJournal(f *os.File, id, path string) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return &SessionInUseError{ID: id, Path: path, PID: flockHolder(f)}
		}
		return fmt.Errorf("session log %s: lock: %w", path, err)
	}
}

// flockHolder returns the pid holding a flock write lock on f's file as
// /proc/locks reports it, or 0 when that is not known.
func flockHolder(f *os.File) int {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return 0
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return 0
	}
	dev := uint64(st.Dev) // int32 on some platforms
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(dev), unix.Minor(dev), st.Ino)
	// "1: FLOCK  ADVISORY  WRITE 2246 fe:00:9978098 0 EOF"; waiters have "->" after the number.
	for line := range strings.Lines(string(b)) {
		fl := strings.Fields(line)
		if len(fl) >= 6 && fl[1] == "FLOCK" && fl[3] == "WRITE" && fl[5] == want {
			if pid, err := strconv.Atoi(fl[4]); err == nil && pid > 0 {
				return pid
			}
		}
	}
	return 0
}

// CreateJournal creates the log of a new session, writes its header and
// returns it locked (see [OpenJournal]) until [Journal.Close]. The file
// must not exist; it is written as a temporary file in the sessions
// directory, locked, and linked into place with its header, so no other
// process ever sees it empty or unlocked, and a symlink in its place is
// never followed. On a file system without hard links (FAT, many FUSE
// mounts) it is created in place instead (O_EXCL, then locked): another
// process could then see it empty for an instant, which the random session
// id makes harmless. Temporary files older than staleTemp, left by a
// process killed mid-create, are removed.
func CreateJournal(stateDir string, header Record) (*Journal, error) {
	if !ValidSessionID(header.ID) {
		return nil, fmt.Errorf("session id %q: want letters, digits, '-' or '_'", header.ID)
	}
	dir := SessionsDir(stateDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("session log: %w", err)
	}
	sweepTemps(dir)
	path := SessionPath(stateDir, header.ID)
	header.Type, header.V = RecordSession, JournalVersion
	// The temporary name does not end in .jsonl: ListSessions skips it.
	f, err := os.CreateTemp(dir, "."+header.ID+".*.tmp") // 0600, O_EXCL
	if err != nil {
		return nil, fmt.Errorf("session log: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	fail := func(err error) (*Journal, error) {
		_ = f.Close()
		return nil, err
	}
	if err := lockJournal(f, header.ID, path); err != nil {
		return fail(err)
	}
	j := &Journal{f: f, path: path}
	if err := j.Append(header); err != nil {
		return fail(err)
	}
	err = linkFile(tmp, path)
	switch {
	case err == nil:
		return j, nil
	case errors.Is(err, fs.ErrExist):
		return fail(fmt.Errorf("session log: %w", err))
	}
	// No hard links here: create the log in place.
	_ = f.Close()
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("session log: %w", err)
	}
	if err := lockJournal(f, header.ID, path); err != nil {
		return fail(err)
	}
	j = &Journal{f: f, path: path}
	if err := j.Append(header); err != nil {
		_ = f.Close()
		_ = os.Remove(path)
		return nil, err
	}
	return j, nil
}

// linkFile is os.Link; tests replace it to stand for a file system
// without hard links.
var linkFile = os.Link

// staleTemp is the age past which a temporary session file is a leftover.
const staleTemp = time.Hour

// sweepTemps removes CreateJournal's temporary files in dir that are older
// than staleTemp (a create takes microseconds; a leftover that is a second
// link to a live log only loses that extra name).
func sweepTemps(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		name := e.Name()
		if !strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".tmp") || !e.Type().IsRegular() {
			continue
		}
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleTemp {
			_ = os.Remove(filepath.Join(dir, name))
		}
	}
}

// OpenJournal opens the log of session id for appending and returns its
// records. It first takes an exclusive advisory lock (flock) on the file,
// held until [Journal.Close] (or the process's death): when another
// Journal holds it, in this process or another, OpenJournal fails at once
// with a [*SessionInUseError] and reads nothing. A torn final line (a
// crash mid-write) is then truncated away, under the lock, so it is never
// a record another process is still writing.
func OpenJournal(stateDir, id string) (*Journal, []Record, error) {
	if !ValidSessionID(id) {
		return nil, nil, fmt.Errorf("session id %q: %w", id, ErrSessionNotFound)
	}
	path := SessionPath(stateDir, id)
	// O_APPEND: every write lands at the end; reading and truncating
	// are unaffected.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("session %q: %w (looked in %s)", id, ErrSessionNotFound, SessionsDir(stateDir))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("session log: %w", err)
	}
	fail := func(err error) (*Journal, []Record, error) {
		_ = f.Close()
		return nil, nil, err
	}
	if err := lockJournal(f, id, path); err != nil {
		return fail(err)
	}
	recs, good, err := readRecords(f)
	if err != nil {
		return fail(fmt.Errorf("session log %s: %w", path, err))
	}
	if err := f.Truncate(good); err != nil {
		return fail(fmt.Errorf("session log: %w", err))
	}
	j := &Journal{f: f, path: path}
	if n := len(recs); n > 0 {
		j.seq = recs[n-1].Seq
	}
	return j, recs, nil
}

// ReadJournal reads every complete record of the log at path; a torn final
// line is ignored.
func ReadJournal(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, _, err := readRecords(f)
	if err != nil {
		return nil, fmt.Errorf("session log %s: %w", path, err)
	}
	return recs, nil
}

// readRecords decodes newline-terminated records and returns the byte
// length of the intact prefix. A final line without its newline is a torn
// write and is not returned; a malformed complete line is an error naming
// its line number.
func readRecords(r io.Reader) (recs []Record, good int64, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return recs, good, nil // b, if any, is a torn tail
		}
		if err != nil {
			return nil, 0, err
		}
		var rec Record
		if err := json.Unmarshal(bytes.TrimSpace(b), &rec); err != nil {
			return nil, 0, fmt.Errorf("line %d: %w", line, err)
		}
		if line == 1 && rec.Type != RecordSession {
			return nil, 0, fmt.Errorf("line 1: want a %q header, got %q", RecordSession, rec.Type)
		}
		recs = append(recs, rec)
		good += int64(len(b))
	}
}

// Path returns the log file's path.
func (j *Journal) Path() string { return j.path }

// Append writes rec as one line, filling Seq and Time. After a write
// error every later Append returns that error.
func (j *Journal) Append(rec Record) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return j.err
	}
	if j.f == nil {
		return errors.New("session log is closed")
	}
	j.seq++
	rec.Seq = j.seq
	if rec.Time.IsZero() {
		rec.Time = time.Now().UTC()
	}
	b, err := json.Marshal(rec)
	if err != nil {
		j.err = fmt.Errorf("session log: encoding %s record: %w", rec.Type, err)
		return j.err
	}
	b = append(b, '\n')
	if _, err := j.f.Write(b); err != nil {
		// Name the log, not the descriptor's file name (a new log is
		// written through the temporary name it was linked from).
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		j.err = fmt.Errorf("session log %s: %w", j.path, err)
		return j.err
	}
	return nil
}

// Close closes the file, which releases its lock; later Appends fail.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}

// Replay rebuilds the conversation of a log: every record carrying a
// message, in order. An assistant message whose tool calls lack results
// (a crash between the two) gets aborted results so the history stays a
// valid request.
func Replay(recs []Record) []llm.Message {
	var out []llm.Message
	pending := map[string]bool{}
	var open []llm.ToolCall
	flush := func() {
		for _, tc := range open {
			if pending[tc.ID] {
				out = append(out, llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: abortedResultText})
			}
		}
		open, pending = nil, map[string]bool{}
	}
	for _, r := range recs {
		if r.Message == nil {
			continue
		}
		m := *r.Message
		switch m.Role {
		case llm.RoleTool:
			delete(pending, m.ToolCallID)
		default:
			flush()
		}
		out = append(out, m)
		if m.Role == llm.RoleAssistant {
			open = slices.Clone(m.ToolCalls)
			for _, tc := range m.ToolCalls {
				pending[tc.ID] = true
			}
		}
	}
	flush()
	return out
}

const abortedResultText = "Error: the tool call was interrupted before it finished"

// SessionInfo summarises one stored session for `harness sessions`.
type SessionInfo struct {
	ID       string    `json:"id"`
	Cwd      string    `json:"cwd"`
	Model    string    `json:"model"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
	Turns    int       `json:"turns"`
	Title    string    `json:"title"` // the first user prompt, first line, at most 80 runes
	Path     string    `json:"path"`
	Messages int       `json:"messages"`
}

// ListSessions reads the headers of every session under stateDir, newest
// first. Unreadable logs are skipped.
func ListSessions(stateDir string) ([]SessionInfo, error) {
	entries, err := os.ReadDir(SessionsDir(stateDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []SessionInfo
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !ValidSessionID(id) || !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(SessionsDir(stateDir), e.Name())
		recs, err := ReadJournal(path)
		if err != nil || len(recs) == 0 {
			continue
		}
		info := SessionInfo{ID: recs[0].ID, Cwd: recs[0].Cwd, Model: recs[0].Model, Created: recs[0].Time, Updated: recs[len(recs)-1].Time, Path: path}
		for _, r := range recs {
			if r.Message == nil {
				continue
			}
			info.Messages++
			if r.Type == RecordUser && r.Source == "" {
				info.Turns++
				if info.Title == "" {
					info.Title = title(r.Message.Content)
				}
			}
		}
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b SessionInfo) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return out, nil
}

func title(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:79]) + "…"
	}
	return s
}

package sessions

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// JSONL is the sessions-jsonl provider: one append-only JSONL file per
// session, Dir/ID.jsonl, one record per line, each written with a single
// write(2) on a file opened O_APPEND, so a crash can at worst leave a torn
// final line; earlier lines are never rewritten. An open session holds an
// exclusive lock on its file (flock; LockFileEx on Windows), so one session is written
// by one handle at a time, in this process or another, and a killed
// holder's lock goes with it; opening a log for appending drops a torn
// tail under that lock. Readers take no lock. Files are 0600 in a 0700
// directory. Safe for concurrent use.
type JSONL struct {
	dir string
}

var _ Provider = (*JSONL)(nil)

// NewJSONL returns the provider over directory dir (created 0700 on the
// first Create).
func NewJSONL(dir string) *JSONL { return &JSONL{dir: dir} }

// JSONLDir returns the directory of session logs under a state directory:
// stateDir/sessions.
func JSONLDir(stateDir string) string { return filepath.Join(stateDir, "sessions") }

// Dir returns the directory of the logs.
func (p *JSONL) Dir() string { return p.dir }

// Location returns the log file of session id ("": the directory).
func (p *JSONL) Location(id string) string {
	if id == "" {
		return p.dir
	}
	return filepath.Join(p.dir, id+".jsonl")
}

// Close does nothing: handles own their files.
func (p *JSONL) Close() error { return nil }

// lockFile takes an exclusive advisory lock (flock) on f, the log of
// session id, without waiting for another holder. The lock belongs to f's
// open file description: it conflicts with every other open of the file,
// in this process or another, and it is released when f is closed or the
// process dies.
//
// One holder is waited for, up to selfHeldWait (bounded by ctx): this
// process itself, or a holder /proc/locks does not name. A child this process forks shares its open file
// descriptions until it execs (Go opens files close-on-exec), so a log
// closed while another goroutine was starting a command stays locked for
// that moment: a Close followed at once by an Open of the same session
// would otherwise fail "already open in this harness process" at random.
// A lock this process really holds elsewhere (another Service on the same
// directory) is reported once the wait is over.
func lockFile(ctx context.Context, f *os.File, id, path string) error {
	var deadline time.Time
	delay := time.Millisecond
	for {
		busy, err := tryLock(f)
		switch {
		case err != nil:
			return fmt.Errorf("session log %s: lock: %w", path, err)
		case !busy:
			return nil
		}
		// An unknown holder (0: /proc/locks unreadable, or a pid
		// outside this pid namespace) may be this process too.
		holder := flockHolder(f)
		if holder != os.Getpid() && holder != 0 {
			return &InUseError{ID: id, Path: path, PID: holder}
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(selfHeldWait)
		}
		if time.Now().After(deadline) || sleepCtx(ctx, delay) != nil {
			return &InUseError{ID: id, Path: path, PID: holder}
		}
		delay = min(2*delay, 50*time.Millisecond)
	}
}

// selfHeldWait is how long lockFile waits for a lock held by this process
// (see lockFile): far longer than a fork-to-exec, short for a user.
const selfHeldWait = 2 * time.Second

// sleepCtx sleeps d or until ctx ends (then returns its error).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Create creates the log of a new session with its header line and
// returns it locked until the handle's Close. The file must not exist; it
// is written as a temporary file in the directory, locked, and linked
// into place with its header, so no other process ever sees it empty or
// unlocked, and a symlink in its place is never followed. On a file
// system without hard links (FAT, many FUSE mounts) it is created in
// place instead (O_EXCL, then locked): another process could then see it
// empty for an instant, which the random session id makes harmless.
// Temporary files older than staleTemp, left by a process killed
// mid-create, are removed.
func (p *JSONL) Create(ctx context.Context, h Header, header Record) (Handle, error) {
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return nil, fmt.Errorf("session log: %w", err)
	}
	sweepTemps(p.dir)
	path := p.Location(h.ID)
	// The temporary name does not end in .jsonl: List skips it.
	f, err := os.CreateTemp(p.dir, "."+h.ID+".*.tmp") // 0600, O_EXCL
	if err != nil {
		return nil, fmt.Errorf("session log: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	fail := func(err error) (Handle, error) {
		_ = f.Close()
		return nil, err
	}
	if err := lockFile(ctx, f, h.ID, path); err != nil {
		return fail(err)
	}
	j := &jsonlHandle{f: f, path: path}
	if err := j.Append(context.Background(), header); err != nil {
		return fail(err)
	}
	err = linkFile(tmp, path)
	switch {
	case err == nil:
		return j, nil
	case errors.Is(err, fs.ErrExist):
		return fail(fmt.Errorf("session log %s: %w", path, ErrExists))
	}
	// No hard links here: create the log in place.
	_ = f.Close()
	f, err = openNoFollow(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("session log %s: %w", path, ErrExists)
	}
	if err != nil {
		return nil, fmt.Errorf("session log: %w", err)
	}
	if err := lockFile(ctx, f, h.ID, path); err != nil {
		return fail(err)
	}
	j = &jsonlHandle{f: f, path: path}
	if err := j.Append(context.Background(), header); err != nil {
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

// sweepTemps removes Create's temporary files in dir that are older than
// staleTemp (a create takes microseconds; a leftover that is a second
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

// Open opens the log of session id for appending and returns its
// records. It first takes the file's exclusive lock: when another handle
// holds it, in this process or another, Open fails at once with an
// *InUseError and reads nothing (a lock this process holds is waited
// for up to 2 s first, as a child being started may hold a copy of a log
// just closed: see lockFile). A torn final line (a crash mid-write) is
// then truncated away, under the lock, so it is never a record another
// process is still writing.
func (p *JSONL) Open(ctx context.Context, id string) (Handle, []Record, error) {
	path := p.Location(id)
	// O_APPEND: every write lands at the end; reading and truncating
	// are unaffected.
	f, err := openNoFollow(path, os.O_RDWR|os.O_APPEND, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("session %q: %w (looked in %s)", id, ErrNotFound, p.dir)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("session log: %w", err)
	}
	fail := func(err error) (Handle, []Record, error) {
		_ = f.Close()
		return nil, nil, err
	}
	if err := lockFile(ctx, f, id, path); err != nil {
		return fail(err)
	}
	recs, good, err := readRecords(f)
	if err != nil {
		return fail(fmt.Errorf("session log %s: %w", path, err))
	}
	if err := f.Truncate(good); err != nil {
		return fail(fmt.Errorf("session log: %w", err))
	}
	return &jsonlHandle{f: f, path: path}, recs, nil
}

// Read reads every complete record of session id; a torn final line is
// ignored.
func (p *JSONL) Read(_ context.Context, id string) ([]Record, error) {
	path := p.Location(id)
	f, err := openNoFollow(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("session %q: %w (looked in %s)", id, ErrNotFound, p.dir)
	}
	if err != nil {
		return nil, fmt.Errorf("session log: %w", err)
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
		rec, err := DecodeRecord(b)
		if err != nil {
			return nil, 0, fmt.Errorf("line %d: %w", line, err)
		}
		if line == 1 && rec.Type != TypeHeader {
			return nil, 0, fmt.Errorf("line 1: want a %q header, got %q", TypeHeader, rec.Type)
		}
		recs = append(recs, rec)
		good += int64(len(b))
	}
}

// List reads every log of the directory (unreadable ones are skipped),
// summarises it, and returns the page q selects, newest first.
func (p *JSONL) List(ctx context.Context, q Query) (Page, error) {
	entries, err := os.ReadDir(p.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return Page{}, nil
	}
	if err != nil {
		return Page{}, err
	}
	var all []Info
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return Page{}, err
		}
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !ValidID(id) || !e.Type().IsRegular() {
			continue
		}
		if info, ok := p.info(ctx, id); ok && matches(info, q) {
			all = append(all, info)
		}
	}
	return page(all, q), nil
}

// info summarises the log of id; false when it is unreadable.
func (p *JSONL) info(ctx context.Context, id string) (Info, bool) {
	recs, err := p.Read(ctx, id)
	if err != nil || len(recs) == 0 {
		return Info{}, false
	}
	h, err := ParseHeader(recs[0])
	if err != nil {
		return Info{}, false
	}
	info := Info{ID: h.ID, Cwd: h.Cwd, Model: h.Model, Parent: h.Parent, Origin: h.Origin, Created: h.Time, Updated: h.Time, Path: p.Location(id)}
	for _, r := range recs[1:] {
		info.Add(r)
	}
	return info, true
}

// matches reports whether info passes q's filters.
func matches(info Info, q Query) bool {
	return (q.Cwd == "" || info.Cwd == q.Cwd) && (q.Parent == "" || info.Parent == q.Parent)
}

// page sorts all newest first and cuts the page q selects.
func page(all []Info, q Query) Page {
	slices.SortFunc(all, func(a, b Info) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	if q.Cursor != "" {
		t, id, _ := ParseCursor(q.Cursor)
		i, _ := slices.BinarySearchFunc(all, Info{Updated: t, ID: id}, func(a, b Info) int {
			if c := b.Updated.Compare(a.Updated); c != 0 {
				return c
			}
			return strings.Compare(b.ID, a.ID)
		})
		if i < len(all) && all[i].ID == id && all[i].Updated.Equal(t) {
			i++
		}
		all = all[i:]
	}
	if q.Limit > 0 && len(all) > q.Limit {
		all = all[:q.Limit]
	}
	return Page{Sessions: all, Next: NextCursor(all, q.Limit)}
}

// Delete removes the log of session id after taking its lock (an
// *InUseError when another handle holds it).
func (p *JSONL) Delete(ctx context.Context, id string) error {
	path := p.Location(id)
	f, err := openNoFollow(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("session %q: %w (looked in %s)", id, ErrNotFound, p.dir)
	}
	if err != nil {
		return fmt.Errorf("session log: %w", err)
	}
	defer f.Close()
	if err := lockFile(ctx, f, id, path); err != nil {
		return err
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("session log: %w", err)
	}
	return nil
}

// jsonlHandle is an open, locked log.
type jsonlHandle struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

// Append writes rec as one line with one write(2).
func (j *jsonlHandle) Append(_ context.Context, rec Record) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return fmt.Errorf("session log %s: %w", j.path, ErrClosed)
	}
	b := make([]byte, 0, len(rec.Data)+1)
	b = append(append(b, rec.Data...), '\n')
	if _, err := j.f.Write(b); err != nil {
		// Name the log, not the descriptor's file name (a new log is
		// written through the temporary name it was linked from).
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("session log %s: %w", j.path, err)
	}
	return nil
}

// Close closes the file, which releases its lock.
func (j *jsonlHandle) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}

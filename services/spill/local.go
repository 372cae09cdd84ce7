package spill

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"
)

// Hint is the retrieval guidance spill-local returns with every locator: the
// model reads a spilled artifact with the read tool (offset/limit) or greps it.
const Hint = "Use read with offset/limit, or grep this path to search within it."

// Mode bits spill-local enforces, whatever the process umask.
const (
	DirMode  fs.FileMode = 0o700 // owner directories
	FileMode fs.FileMode = 0o600 // spill files
)

var (
	// Compiled on first use: package init runs at every harness start.
	ownerDirPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^session-[0-9a-f]{12}$`) })
	// Compiled on first use: package init runs at every harness start.
	fileNamePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{12}(?:[0-9a-f]{12})?-`) }) // 12 hex (reference B2); 24 hex from earlier builds
)

// LocalOptions configures a [LocalStore].
type LocalOptions struct {
	// Root is the directory that holds one subdirectory per owner. It is made
	// absolute against the working directory and created (0700) if missing.
	Root string
	// MaxAge is the retention age: Cleanup deletes spill files (and empty owner
	// directories) whose modification time is older than now-MaxAge. Zero
	// disables age-based cleanup.
	MaxAge time.Duration
	// Keep leaves the files written by this store in place on Close; they
	// are then aged out by MaxAge at a later start. When false, Close deletes
	// them (and their owner directories once empty), never files written by
	// another store or process that shares an owner directory.
	Keep bool
}

// LocalStore is the local file backend of [Store] (the spill-local plugin's
// service). It is safe for concurrent use. Close waits for saves in flight.
type LocalStore struct {
	root   string
	maxAge time.Duration
	keep   bool

	mu     sync.RWMutex // SaveText holds R; Close holds W
	closed bool
	owned  map[string]struct{} // owner directories written through this store
	files  map[string]struct{} // spill files written through this store
	ownMu  sync.Mutex
}

// NewLocalStore resolves and creates opts.Root (mode 0700 when created) and
// returns a store writing under it. It fails when Root is empty or exists but
// is not a directory.
func NewLocalStore(opts LocalOptions) (*LocalStore, error) {
	if opts.Root == "" {
		return nil, errors.New("spill-local: root: must be non-empty")
	}
	if opts.MaxAge < 0 {
		return nil, fmt.Errorf("spill-local: maxAge: must not be negative (got %s)", opts.MaxAge)
	}
	root, err := filepath.Abs(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("spill-local: root: %w", err)
	}
	if err := os.MkdirAll(root, DirMode); err != nil {
		return nil, fmt.Errorf("spill-local: root: %w", err)
	}
	return &LocalStore{root: root, maxAge: opts.MaxAge, keep: opts.Keep, owned: map[string]struct{}{}, files: map[string]struct{}{}}, nil
}

// DefaultRoot is the default spill root: $XDG_STATE_HOME/harness/spill, or
// $HOME/.local/state/harness/spill when XDG_STATE_HOME is unset or relative.
func DefaultRoot() (string, error) {
	if s := os.Getenv("XDG_STATE_HOME"); s != "" && filepath.IsAbs(s) {
		return filepath.Join(s, "harness", "spill"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("spill-local: no default root: %w", err)
	}
	return filepath.Join(home, ".local", "state", "harness", "spill"), nil
}

// Root returns the absolute root directory.
func (s *LocalStore) Root() string { return s.root }

// OwnerDir returns the directory that holds sessionID's spills:
// <root>/session-<first 12 hex digits of sha256(sessionID)>.
func (s *LocalStore) OwnerDir(sessionID string) string {
	sum := sha256.Sum256([]byte(sessionID))
	return filepath.Join(s.root, "session-"+hex.EncodeToString(sum[:6]))
}

// admit checks req and ctx and holds the store open (its read lock) until
// the returned unlock is called; ErrClosed once Close has begun.
func (s *LocalStore) admit(ctx context.Context, req SaveRequest) (unlock func(), err error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return nil, ErrClosed
	}
	return s.mu.RUnlock, nil
}

// SaveText writes req.Content to a new private file in the owner's directory
// and returns its absolute path as the locator, [Hint], and the exact size.
// The file is created exclusively (O_EXCL|O_NOFOLLOW, mode 0600); a file that
// fails mid-write is removed. Errors name the failing step.
func (s *LocalStore) SaveText(ctx context.Context, req SaveRequest) (Ref, error) {
	unlock, err := s.admit(ctx, req)
	if err != nil {
		return Ref{}, err
	}
	defer unlock()
	dir := s.OwnerDir(req.Owner.SessionID)
	dirFD, err := s.openOwnerDir(dir)
	if err != nil {
		return Ref{}, err
	}
	defer dirFD.close()

	var random [6]byte // 12 hex digits, as dsh's layout (reference B2)
	if _, err := rand.Read(random[:]); err != nil {
		return Ref{}, fmt.Errorf("spill-local: random name: %w", err)
	}
	name := hex.EncodeToString(random[:]) + "-" + boundedSegment(req.SuggestedName)
	f, err := dirFD.create(name)
	if err != nil {
		return Ref{}, fmt.Errorf("spill-local: create %s: %w", filepath.Join(dir, name), err)
	}
	werr := writeAll(f, req.Content)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		dirFD.remove(name)
		return Ref{}, fmt.Errorf("spill-local: write %s: %w", f.Name(), werr)
	}
	s.ownMu.Lock()
	s.files[f.Name()] = struct{}{}
	s.ownMu.Unlock()
	return Ref{Locator: Locator(f.Name()), Hint: Hint, Bytes: int64(len(req.Content))}, nil
}

// AdoptFile implements [FileAdopter]: the regular file at path (never a
// symlink) is renamed into req's owner directory under a fresh
// <12 hex>-<name>, made 0600 and tracked like a saved file (deleted on Close
// unless Keep). Across filesystems it is copied (streamed, never held in
// memory) and the source removed. Bytes is the file's size.
func (s *LocalStore) AdoptFile(ctx context.Context, req SaveRequest, path string) (Ref, error) {
	unlock, err := s.admit(ctx, req)
	if err != nil {
		return Ref{}, err
	}
	defer unlock()
	src, size, err := openSource(path)
	if err != nil {
		return Ref{}, fmt.Errorf("spill-local: adopt %s: %w", path, err)
	}
	defer src.Close()
	dir := s.OwnerDir(req.Owner.SessionID)
	dirFD, err := s.openOwnerDir(dir)
	if err != nil {
		return Ref{}, err
	}
	defer dirFD.close()
	var random [6]byte
	if _, err := rand.Read(random[:]); err != nil {
		return Ref{}, fmt.Errorf("spill-local: random name: %w", err)
	}
	name := hex.EncodeToString(random[:]) + "-" + boundedSegment(req.SuggestedName)
	dst := filepath.Join(dir, name)
	moved, err := dirFD.moveIn(path, src, name)
	switch {
	case err != nil:
		return Ref{}, fmt.Errorf("spill-local: adopt %s: %w", path, err)
	case !moved:
		f, err := dirFD.create(name)
		if err != nil {
			return Ref{}, fmt.Errorf("spill-local: create %s: %w", dst, err)
		}
		n, werr := copyPrivate(f, src)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			dirFD.remove(name)
			return Ref{}, fmt.Errorf("spill-local: write %s: %w", dst, werr)
		}
		size = n
		_ = os.Remove(path)
	}
	s.ownMu.Lock()
	s.files[dst] = struct{}{}
	s.ownMu.Unlock()
	return Ref{Locator: Locator(dst), Hint: Hint, Bytes: size}, nil
}

// copyPrivate makes f private, then streams src into it.
func copyPrivate(f *os.File, src io.Reader) (int64, error) {
	if err := f.Chmod(FileMode); err != nil {
		return 0, err
	}
	return io.Copy(f, src)
}

func writeAll(f *os.File, content string) error {
	// umask can only narrow the create mode; Fchmod pins it exactly.
	if err := f.Chmod(FileMode); err != nil {
		return err
	}
	_, err := f.WriteString(content)
	return err
}

// Cleanup applies retention: it deletes spill files under the root whose
// modification time is before now-MaxAge, then owner directories left empty
// and equally old. Only entries shaped like spill-local's own names are
// touched (session-<12 hex>/<12 hex>-…), and symlinks are never followed or
// removed. It returns how many files it deleted. MaxAge 0 deletes nothing;
// after Close it returns [ErrClosed].
func (s *LocalStore) Cleanup(now time.Time) (int, error) {
	if s.maxAge <= 0 {
		return 0, nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, ErrClosed
	}
	cutoff := now.Add(-s.maxAge)
	entries, err := os.ReadDir(s.root)
	if err != nil {
		return 0, fmt.Errorf("spill-local: cleanup: %w", err)
	}
	removed := 0
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !ownerDirPattern().MatchString(e.Name()) {
			continue // ReadDir reports a symlink as not a directory
		}
		dir := filepath.Join(s.root, e.Name())
		n, err := cleanupOwnerDir(dir, cutoff)
		removed += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	return removed, errors.Join(errs...)
}

func cleanupOwnerDir(dir string, cutoff time.Time) (int, error) {
	// The directory's own age is taken before deleting changes its mtime.
	dirInfo, dirErr := os.Lstat(dir)
	files, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("spill-local: cleanup: %w", err)
	}
	removed := 0
	var errs []error
	for _, f := range files {
		if !f.Type().IsRegular() || !fileNamePattern().MatchString(f.Name()) {
			continue
		}
		info, err := f.Info()
		if err != nil || !info.ModTime().Before(cutoff) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, f.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("spill-local: cleanup: %w", err))
			continue
		}
		removed++
	}
	if dirErr == nil && dirInfo.ModTime().Before(cutoff) {
		// Fails harmlessly (ENOTEMPTY) while fresh or foreign files remain.
		if err := os.Remove(dir); err != nil && !dirNotEmpty(err) {
			errs = append(errs, fmt.Errorf("spill-local: cleanup: %w", err))
		}
	}
	return removed, errors.Join(errs...)
}

// Close stops the store: later SaveText calls fail with [ErrClosed]. It waits
// for saves in flight and, unless Keep was set, deletes every file this store
// wrote, then each owner directory it wrote to if that is now empty (another
// process with the same owner, such as a concurrent `harness tool`, may
// still be using it). It is idempotent.
func (s *LocalStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.keep {
		return nil
	}
	s.ownMu.Lock()
	defer s.ownMu.Unlock()
	var errs []error
	for file := range s.files {
		if err := os.Remove(file); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("spill-local: remove %s: %w", file, err))
		}
	}
	for dir := range s.owned {
		_ = os.Remove(dir) // fails while another store's files remain: keep it
	}
	clear(s.files)
	clear(s.owned)
	return errors.Join(errs...)
}

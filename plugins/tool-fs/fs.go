package toolfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/dshgo/harness/services/subprocess/sandbox"
)

// Write operations reported in WriteValue.Operation.
const (
	// OpCreate: the file did not exist before the write.
	OpCreate = "create"
	// OpUpdate: an existing file was replaced.
	OpUpdate = "update"
)

// defaultNewFileMode is the permission of files created by write.
const defaultNewFileMode fs.FileMode = 0o644

// diffBasisMaxBytes bounds the "before" text kept for presentation diffs; larger
// or non-text prior contents are reported as null.
const diffBasisMaxBytes = 1 << 20

// Caps are the read limits of one FS (plugin config after defaulting).
type Caps struct {
	// Limit is the default and maximum lines per read.
	Limit int
	// MaxLineLength is the longest line kept, in code points.
	MaxLineLength int
	// MaxBytes caps one read's selected output, in bytes.
	MaxBytes int
}

// DefaultCaps are dsh's read caps: 2000 lines, 2000 characters per line, 50 KiB.
func DefaultCaps() Caps {
	return Caps{Limit: DefaultReadLimit, MaxLineLength: DefaultMaxLineLength, MaxBytes: DefaultMaxBytes}
}

// FS executes the read, write and edit tools against the local filesystem.
// Mutations are serialized; reads run concurrently. With a non-nil Observations
// the read-before-write policy applies per non-nil owner (an agent session);
// with a nil policy or a nil owner (an unscoped call such as `harness tool`),
// writes and edits are unconditional (still atomic).
type FS struct {
	caps    Caps
	policy  *Observations
	contain func(dir string) *sandbox.Checker // nil: no containment checks
	mu      sync.Mutex                        // serializes write and edit (check, then publish)
}

// SetContainment makes every read, write and edit consult the sandbox
// policy's checker for the call's working directory first (the tool-fs
// plugin passes the subprocess service's default policy): a path the
// sandbox hides from commands, or a protected path to write, is refused
// with CodeSandboxDenied. Call it before the tools run.
func (f *FS) SetContainment(checker func(dir string) *sandbox.Checker) { f.contain = checker }

// checkContained asks the checker of cwd whether op (read or write) of
// path is allowed; nil without containment.
func (f *FS) checkContained(cwd, op string, paths ...string) error {
	if f.contain == nil {
		return nil
	}
	c := f.contain(cwd)
	for _, p := range paths {
		err := c.Read(p)
		if op == "write" {
			err = c.Write(p)
		}
		if err != nil {
			return &Error{Code: CodeSandboxDenied, Message: err.Error(), Err: err}
		}
	}
	return nil
}

// New returns an FS with the given caps and policy state (nil disables the policy).
func New(caps Caps, policy *Observations) *FS {
	return &FS{caps: caps, policy: policy}
}

// Caps returns the read caps of f.
func (f *FS) Caps() Caps { return f.caps }

// Resolve makes p absolute: an absolute p is cleaned, a relative one is joined
// to cwd (or to the process working directory when cwd is empty). On
// Windows p is first rewritten by WindowsPath (/c/x and C:/x are C:\x).
func Resolve(cwd, p string) (string, error) {
	if runtime.GOOS == "windows" {
		p = WindowsPath(p)
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("resolve %q: %w", p, err)
		}
		cwd = wd
	}
	return filepath.Join(cwd, p), nil
}

// targetKey follows symlinks so that observations made through a link and
// through the real path agree; a missing file keys by its resolved path.
func targetKey(abs string) string {
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

func aborted(ctx context.Context, verb string) error {
	if err := ctx.Err(); err != nil {
		return &Error{Code: CodeAborted, Message: verb + " aborted", Err: err}
	}
	return nil
}

// ReadArgs are the read tool's arguments.
type ReadArgs struct {
	FilePath string `json:"file_path" jsonschema_description:"Path of the file to read. A relative path resolves against the session working directory."`
	Offset   *int   `json:"offset,omitempty" jsonschema_description:"1-based line number to start reading from. Defaults to 1."`
	Limit    *int   `json:"limit,omitempty" jsonschema_description:"Maximum number of lines to return. Defaults to 2000 (also the maximum)."`
}

// Window validates args against f's caps (B2 wording) and returns the resolved window.
func (f *FS) Window(args ReadArgs) (Window, error) {
	if strings.TrimSpace(args.FilePath) == "" {
		return Window{}, errors.New("file_path must be a non-empty string")
	}
	w := Window{Offset: 1, Limit: f.caps.Limit, MaxLineLength: f.caps.MaxLineLength, MaxBytes: f.caps.MaxBytes}
	if args.Offset != nil {
		if *args.Offset < 1 {
			return Window{}, errors.New("offset must be a positive integer")
		}
		w.Offset = *args.Offset
	}
	if args.Limit != nil {
		if *args.Limit < 1 {
			return Window{}, errors.New("limit must be a positive integer")
		}
		if *args.Limit > f.caps.Limit {
			return Window{}, fmt.Errorf("limit must be less than or equal to %d", f.caps.Limit)
		}
		w.Limit = *args.Limit
	}
	return w, nil
}

// Read returns a numbered window of a UTF-8 text file (B2) and records owner's
// observation of it (present at the version stat saw before reading, or absent).
func (f *FS) Read(ctx context.Context, owner any, cwd string, args ReadArgs) (ReadValue, error) {
	w, err := f.Window(args)
	if err != nil {
		return ReadValue{}, err
	}
	if err := aborted(ctx, "read"); err != nil {
		return ReadValue{}, err
	}
	path, err := Resolve(cwd, args.FilePath)
	if err != nil {
		return ReadValue{}, err
	}
	if err := f.checkContained(cwd, "read", path); err != nil {
		return ReadValue{}, err
	}
	key := targetKey(path)
	// O_NONBLOCK: opening a FIFO with no writer must not hang the call
	// (the Stat below then refuses it); regular files are unaffected.
	file, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return ReadValue{}, f.readOpenError(owner, key, path, err)
	}
	defer file.Close()
	// What was opened, in case a link changed since the check.
	if err := f.checkContained(cwd, "read", openedPath(file)); err != nil {
		return ReadValue{}, err
	}
	info, err := file.Stat()
	if err != nil {
		return ReadValue{}, &Error{Code: CodeIO, Message: fmt.Sprintf("cannot read %q: %v", path, err), Err: err}
	}
	if !info.Mode().IsRegular() {
		return ReadValue{}, fsErrorf(CodeNotRegularFile, "cannot read %q: not a regular file", path)
	}
	res, err := BuildWindow(ctxReader{ctx: ctx, r: file}, w, path)
	if err != nil {
		return ReadValue{}, err
	}
	if f.guarded(owner) {
		f.policy.Record(owner, key, Observation{Present: true, Version: versionOf(info)})
	}
	lines := res.Lines
	if lines == nil {
		lines = []Line{}
	}
	return ReadValue{Path: path, Offset: w.Offset, Lines: lines, TotalLines: res.TotalLines}, nil
}

func (f *FS) readOpenError(owner any, key, path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if f.guarded(owner) {
			f.policy.Record(owner, key, Observation{Present: false})
		}
		return fsErrorf(CodeNotFound, "cannot read %q: not found", path)
	case errors.Is(err, fs.ErrPermission):
		return &Error{Code: CodeIO, Message: fmt.Sprintf("cannot read %q: permission denied", path), Err: err}
	default:
		return &Error{Code: CodeIO, Message: fmt.Sprintf("cannot read %q: %v", path, err), Err: err}
	}
}

// ctxReader stops a long scan when the call's context ends.
type ctxReader struct {
	ctx context.Context
	r   *os.File
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := aborted(c.ctx, "read"); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// WriteArgs are the write tool's arguments.
type WriteArgs struct {
	FilePath string `json:"file_path" jsonschema_description:"Path of the file to create or replace. A relative path resolves against the session working directory."`
	Content  string `json:"content" jsonschema_description:"The complete new content of the file (UTF-8 text)."`
}

// WriteValue is the canonical value of the write tool (dsh shape).
type WriteValue struct {
	// Path is the absolute path written.
	Path string `json:"path"`
	// Operation is "create" or "update".
	Operation string `json:"operation"`
	// Before is the LF-normalized prior text, or null when the file was new,
	// larger than 1 MiB, or not text.
	Before *string `json:"before"`
	// After is the LF-normalized new text.
	After string `json:"after"`
}

// Write creates or fully replaces a file (B3) atomically, keeping an existing
// file's permission bits. Under the policy, replacing an existing file requires
// owner's present observation at the current version.
func (f *FS) Write(ctx context.Context, owner any, cwd string, args WriteArgs) (WriteValue, error) {
	if strings.TrimSpace(args.FilePath) == "" {
		return WriteValue{}, errors.New("file_path must be a non-empty string")
	}
	path, err := Resolve(cwd, args.FilePath)
	if err != nil {
		return WriteValue{}, err
	}
	if err := f.checkContained(cwd, "write", path); err != nil {
		return WriteValue{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := aborted(ctx, "write"); err != nil {
		return WriteValue{}, err
	}
	key := targetKey(path)
	info, statErr := os.Stat(key)
	exists := statErr == nil
	if statErr != nil && !errors.Is(statErr, fs.ErrNotExist) {
		return WriteValue{}, &Error{Code: CodeIO, Message: fmt.Sprintf("cannot write %q: %v", path, statErr), Err: statErr}
	}
	if exists && !info.Mode().IsRegular() {
		return WriteValue{}, fsErrorf(CodeNotRegularFile, "cannot write %q: not a regular file", path)
	}
	createOnly := false
	if f.guarded(owner) {
		obs, seen := f.policy.Get(owner, key)
		switch {
		case seen && obs.Present && !exists:
			return WriteValue{}, fsErrorf(CodeStaleVersion, "cannot write %q: file no longer exists"+remedyStale, path)
		case seen && obs.Present && versionOf(info) != obs.Version:
			return WriteValue{}, fsErrorf(CodeStaleVersion, "cannot write %q: file changed since it was read"+remedyStale, path)
		case !(seen && obs.Present) && exists:
			return WriteValue{}, notObservedWrite(path)
		case !(seen && obs.Present):
			createOnly = true
		}
	}
	mode := defaultNewFileMode
	var before *string
	if exists {
		mode = info.Mode().Perm()
		before = diffBasis(key, info)
	}
	if err := writeAtomic(key, []byte(args.Content), mode, createOnly); err != nil {
		if errors.Is(err, errExists) {
			return WriteValue{}, notObservedWrite(path)
		}
		return WriteValue{}, &Error{Code: CodeIO, Message: fmt.Sprintf("cannot write %q: %v", path, err), Err: err}
	}
	f.observeAfter(owner, key)
	op := OpCreate
	if exists {
		op = OpUpdate
	}
	return WriteValue{Path: path, Operation: op, Before: before, After: NormalizeLineEndings(args.Content)}, nil
}

func notObservedWrite(path string) error {
	return fsErrorf(CodeNotObserved, "cannot overwrite existing %q without reading it first"+remedyNotObserved, path)
}

// guarded reports whether the read-before-write policy applies to owner.
func (f *FS) guarded(owner any) bool { return f.policy != nil && owner != nil }

func (f *FS) observeAfter(owner any, key string) {
	if !f.guarded(owner) {
		return
	}
	if info, err := os.Stat(key); err == nil {
		f.policy.Record(owner, key, Observation{Present: true, Version: versionOf(info)})
	}
}

func diffBasis(path string, info fs.FileInfo) *string {
	if info.Size() >= diffBasisMaxBytes {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil || len(b) >= diffBasisMaxBytes || bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) {
		return nil
	}
	s := NormalizeLineEndings(string(b))
	return &s
}

// EditArgs are the edit tool's arguments.
type EditArgs struct {
	FilePath   string `json:"file_path" jsonschema_description:"Path of the file to edit. A relative path resolves against the session working directory."`
	OldString  string `json:"old_string" jsonschema_description:"The exact literal text to replace (not a regular expression). Must occur exactly once unless replace_all is true."`
	NewString  string `json:"new_string" jsonschema_description:"The replacement text. Use an empty string to delete old_string."`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema_description:"Replace every occurrence of old_string instead of requiring exactly one. Defaults to false."`
}

// EditValue is the canonical value of the edit tool (dsh shape).
type EditValue struct {
	// Path is the absolute path edited.
	Path string `json:"path"`
	// Before is the LF-normalized text before the edit.
	Before string `json:"before"`
	// After is the LF-normalized text after the edit.
	After string `json:"after"`
}

// ValidateEdit applies the body-level checks of B4.
func ValidateEdit(args EditArgs) error {
	switch {
	case strings.TrimSpace(args.FilePath) == "":
		return errors.New("file_path must be a non-empty string")
	case args.OldString == "":
		return errors.New("old_string must be a non-empty string")
	case args.OldString == args.NewString:
		return errors.New("old_string and new_string must differ")
	}
	return nil
}

// Edit replaces literal text in an existing UTF-8 file (B4). Content and both
// strings are LF-normalized before matching; a CRLF file is written back with
// CRLF. The write is atomic and keeps the file's permission bits. Under the
// policy the version check precedes matching.
func (f *FS) Edit(ctx context.Context, owner any, cwd string, args EditArgs) (EditValue, error) {
	if err := ValidateEdit(args); err != nil {
		return EditValue{}, err
	}
	path, err := Resolve(cwd, args.FilePath)
	if err != nil {
		return EditValue{}, err
	}
	if err := f.checkContained(cwd, "write", path); err != nil {
		return EditValue{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := aborted(ctx, "edit"); err != nil {
		return EditValue{}, err
	}
	key := targetKey(path)
	var obs Observation
	guarded := f.guarded(owner)
	if guarded {
		var seen bool
		obs, seen = f.policy.Get(owner, key)
		if !seen {
			return EditValue{}, fsErrorf(CodeNotObserved, "edit requires reading %q first"+remedyNotObserved, path)
		}
		if !obs.Present {
			return EditValue{}, fsErrorf(CodeNotFound, "cannot edit %q: not found", path)
		}
	}
	info, err := os.Stat(key)
	switch {
	case errors.Is(err, fs.ErrNotExist) && guarded:
		return EditValue{}, fsErrorf(CodeStaleVersion, "cannot edit %q: file changed since it was read"+remedyStale, path)
	case errors.Is(err, fs.ErrNotExist):
		return EditValue{}, fsErrorf(CodeNotFound, "cannot edit %q: not found", path)
	case err != nil:
		return EditValue{}, &Error{Code: CodeIO, Message: fmt.Sprintf("cannot edit %q: %v", path, err), Err: err}
	case !info.Mode().IsRegular():
		return EditValue{}, fsErrorf(CodeNotRegularFile, "cannot edit %q: not a regular file", path)
	case guarded && versionOf(info) != obs.Version:
		return EditValue{}, fsErrorf(CodeStaleVersion, "cannot edit %q: file changed since it was read"+remedyStale, path)
	}
	raw, err := os.ReadFile(key)
	if err != nil {
		return EditValue{}, &Error{Code: CodeIO, Message: fmt.Sprintf("cannot edit %q: %v", path, err), Err: err}
	}
	if bytes.IndexByte(raw, 0) >= 0 {
		return EditValue{}, fsErrorf(CodeNotText, "cannot edit %q: binary file", path)
	}
	if !utf8.Valid(raw) {
		return EditValue{}, fsErrorf(CodeNotText, "cannot edit %q: invalid UTF-8 text", path)
	}
	text := string(raw)
	le := DetectLineEndings(text)
	before := NormalizeLineEndings(text)
	after, err := ApplyLiteralEdit(before, NormalizeLineEndings(args.OldString), NormalizeLineEndings(args.NewString), args.ReplaceAll, path)
	if err != nil {
		return EditValue{}, err
	}
	if err := writeAtomic(key, []byte(RestoreLineEndings(after, le)), info.Mode().Perm(), false); err != nil {
		return EditValue{}, &Error{Code: CodeIO, Message: fmt.Sprintf("cannot edit %q: %v", path, err), Err: err}
	}
	f.observeAfter(owner, key)
	return EditValue{Path: path, Before: before, After: after}, nil
}

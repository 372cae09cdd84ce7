package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxProtectedSnapshot is the largest protected file whose content a Guard
// keeps to put back; a larger one changed by a command is moved aside
// (kept as .rejected-TS) and not restored.
const maxProtectedSnapshot = 1 << 20

// errTooBig: a protected file's previous content was not kept.
var errTooBig = fmt.Errorf("its previous content was not kept (larger than %d bytes or unreadable), so it could not be put back", maxProtectedSnapshot)

// maxProtectedEntries bounds the files a Guard records under one protected
// directory (.git/hooks holds about 15).
const maxProtectedEntries = 256

// protected are the protected paths of one request, absolute: Paths (the
// [ProtectedPaths] under each writable directory, the git-dir entries of
// each git directory found there, the files git includes from them),
// whether they exist or not, and GitDirs, the git directories found (they
// are pinned: bwrap binds each one onto itself, so it cannot be renamed
// away or removed, while its objects, refs, index, HEAD and logs stay
// writable; the guard checks it is still the same directory).
type protected struct {
	Paths   []string
	GitDirs []string
}

// protectedIn lists the protected paths of req under its writable
// directories (the workspace and the writable roots in workspace-write
// mode; nothing in read-only mode). bwrap binds every one that exists when
// the command starts read-only (writes fail with EROFS) and pins the git
// directories; for the others, and under Landlock (which cannot take a
// path out of a writable directory), a [Guard] puts back what the command
// created or changed once it ended.
func protectedIn(req Request) protected {
	if req.Policy.Mode != ModeWorkspaceWrite {
		return protected{}
	}
	var out protected
	writable := writableDirs(Request{Policy: req.Policy, Dir: req.Dir})
	for _, root := range writable {
		paths, gitDirs := protectedUnderRoot(root, writable)
		for _, p := range paths {
			if !slices.Contains(out.Paths, p) {
				out.Paths = append(out.Paths, p)
			}
		}
		for _, g := range gitDirs {
			if !slices.Contains(out.GitDirs, g) {
				out.GitDirs = append(out.GitDirs, g)
			}
		}
	}
	return out
}

// roBindable returns the protected paths that exist now as a regular
// file or a directory (not a symlink: a mount would land on its target,
// which the guard covers instead), for bwrap to bind read-only, except
// the pinned git directories (bound writable onto themselves instead).
func roBindable(p protected) []string {
	var out []string
	for _, path := range p.Paths {
		if slices.Contains(p.GitDirs, path) {
			continue
		}
		st, err := os.Lstat(path)
		if err == nil && (st.Mode().IsRegular() || st.IsDir()) {
			out = append(out, path)
		}
	}
	return out
}

// ProtectedChange is one protected path a command changed, and what the
// guard did about it.
type ProtectedChange struct {
	// Path is the protected path (absolute).
	Path string
	// Created: the path did not exist before the command (it was removed);
	// otherwise its content changed, or it was deleted, and the previous
	// content was put back.
	Created bool
	// Deleted: the command removed it; it was restored.
	Deleted bool
	// KeptAs is where the command's version was moved ("" when there was
	// none, or moving it failed).
	KeptAs string
	// Err is set when the path could not be put back completely.
	Err error
}

// String is the notice for the command's result.
func (c ProtectedChange) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sandbox: protected path %s ", c.Path)
	switch {
	case c.Deleted:
		b.WriteString("was deleted by the command")
	case c.Created:
		b.WriteString("was created by the command")
	default:
		b.WriteString("was changed by the command")
	}
	if c.Err != nil {
		fmt.Fprintf(&b, "; undoing it failed: %v", c.Err)
		if c.KeptAs != "" {
			fmt.Fprintf(&b, " (the command's version is kept as %s)", c.KeptAs)
		}
		return b.String()
	}
	b.WriteString("; the change was undone")
	if c.KeptAs != "" {
		fmt.Fprintf(&b, " and kept as %s", c.KeptAs)
	}
	return b.String()
}

// Guard puts back the protected paths a sandboxed command created or
// changed. Take it with NewGuard before the command starts and call Check
// once after its process range ended. Cost: one lstat per protected path
// and writable root, a read of each existing protected file (at most 1 MiB
// each), and a walk of each protected directory the backend did not bind
// read-only.
type Guard struct {
	items []guardItem
}

// guardItem is one protected path as it was before the command.
type guardItem struct {
	path  string
	bound bool // bound read-only by the backend: only its absence is watched
	// pin: a git directory, recorded by identity only (its objects and
	// refs change with every commit); replaced by anything else, it is
	// moved back from where the command renamed it (see checkPin).
	pin   bool
	entry *snapEntry
	dir   []snapEntry // a directory's files, relative paths in rel
}

// snapEntry is one file's state.
type snapEntry struct {
	rel     string
	mode    fs.FileMode
	size    int64
	mtime   time.Time
	ino     uint64
	content []byte // nil when larger than maxProtectedSnapshot
	target  string // a symlink's target
	big     bool
}

// NewGuard records the protected paths of req before its command runs: the
// content of each existing protected file (up to 1 MiB), and the files of
// each protected directory. readOnly are the paths the backend binds
// read-only (bwrap): a directory among them is recorded by identity only
// (its content cannot change; only a rename of its parent can put another
// one in its place). It returns nil when nothing is protected (read-only
// mode).
func NewGuard(req Request, readOnly []string) *Guard {
	prot := protectedIn(req)
	if len(prot.Paths) == 0 {
		return nil
	}
	g := &Guard{items: make([]guardItem, 0, len(prot.Paths)+len(prot.GitDirs))}
	// The git directories first: one put back by checkPin is then
	// compared entry by entry like any other.
	for _, d := range prot.GitDirs {
		if st, err := os.Lstat(d); err == nil && st.IsDir() {
			g.items = append(g.items, guardItem{path: d, pin: true, bound: slices.Contains(readOnly, d),
				entry: &snapEntry{mode: st.Mode(), ino: inoOf(st)}})
		}
	}
	for _, p := range prot.Paths {
		if slices.Contains(prot.GitDirs, p) {
			continue
		}
		it := guardItem{path: p, bound: slices.Contains(readOnly, p)}
		st, err := os.Lstat(p)
		switch {
		case err != nil:
		case it.bound && st.IsDir():
			// Read-only in the sandbox; only a rename of its parent
			// (mv .git .git2) can put another directory in its place.
			it.entry = &snapEntry{mode: st.Mode(), ino: inoOf(st)}
		case st.IsDir():
			it.entry = &snapEntry{mode: st.Mode()}
			it.dir = snapDir(p)
		default:
			e := snapFile(p, "", st)
			it.entry = &e
		}
		g.items = append(g.items, it)
	}
	return g
}

func snapFile(full, rel string, st fs.FileInfo) snapEntry {
	e := snapEntry{rel: rel, mode: st.Mode(), size: st.Size(), mtime: st.ModTime()}
	e.ino = inoOf(st)
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		e.target, _ = os.Readlink(full)
	case st.Mode().IsRegular() && st.Size() <= maxProtectedSnapshot:
		if b, err := os.ReadFile(full); err == nil && int64(len(b)) <= maxProtectedSnapshot {
			e.content = b
		} else {
			e.big = true
		}
	case st.Mode().IsRegular():
		e.big = true
	}
	return e
}

func inoOf(st fs.FileInfo) uint64 {
	id, _, _ := fileIdentity(st)
	return id.ino
}

// snapDir records the files under dir (up to maxProtectedEntries).
func snapDir(dir string) []snapEntry {
	var out []snapEntry
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		if len(out) >= maxProtectedEntries {
			return filepath.SkipAll
		}
		if inert(d.Name()) {
			return nil
		}
		st, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, snapFile(p, rel, st))
		return nil
	})
	return out
}

// same reports whether the file at full still is what e recorded.
func (e *snapEntry) same(full string, st fs.FileInfo) bool {
	if st.Mode() != e.mode {
		return false
	}
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		t, err := os.Readlink(full)
		return err == nil && t == e.target
	case st.IsDir():
		return true
	case !st.Mode().IsRegular():
		return true
	}
	if st.Size() == e.size && st.ModTime().Equal(e.mtime) && inoOf(st) == e.ino {
		return true // fast path: not rewritten
	}
	if e.content == nil || st.Size() != int64(len(e.content)) {
		return false
	}
	b, err := os.ReadFile(full)
	return err == nil && bytes.Equal(b, e.content)
}

// Check compares the protected paths with the state NewGuard recorded and
// undoes every difference: a path the command created is moved to
// PATH.rejected-UNIXTS, a changed file is moved there too and its previous
// content written back, a deleted one is written back. It returns what it
// found (nil: nothing changed). Call it once, after the command's process
// range ended.
func (g *Guard) Check() []ProtectedChange {
	if g == nil {
		return nil
	}
	var out []ProtectedChange
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	for i := range g.items {
		it := &g.items[i]
		if it.pin {
			out = append(out, checkPin(it, ts)...)
			continue
		}
		st, err := os.Lstat(it.path)
		switch {
		case it.entry == nil && err != nil:
			// absent before and after
		case it.entry == nil:
			c := ProtectedChange{Path: it.path, Created: true}
			c.KeptAs, c.Err = moveAside(it.path, ts)
			out = append(out, c)
		case err != nil:
			if it.bound {
				continue // a bind cannot be deleted from inside: the host removed it, or the command renamed a parent away (which plants nothing)
			}
			c := ProtectedChange{Path: it.path, Deleted: true}
			var inner []ProtectedChange
			inner, c.Err = g.putBack(it, ts)
			out = append(append(out, inner...), c)
		case it.bound && it.entry.mode.IsDir():
			if st.IsDir() && inoOf(st) == it.entry.ino {
				continue // read-only in the sandbox: unchanged
			}
			// The command renamed a parent (mv .git .git2) and made a new
			// one: move it aside; the original is wherever the parent went.
			c := ProtectedChange{Path: it.path}
			c.KeptAs, c.Err = moveAside(it.path, ts)
			if c.Err == nil {
				c.Err = errors.New("the command replaced the directory (renaming a parent), so its previous content could not be put back here")
			}
			out = append(out, c)
		case it.entry.mode.IsDir() != st.IsDir() || (!st.IsDir() && !it.entry.same(it.path, st)):
			c := ProtectedChange{Path: it.path}
			if it.entry.big && !st.IsDir() {
				c.Err = errTooBig
				out = append(out, c)
				continue
			}
			c.KeptAs, c.Err = moveAside(it.path, ts)
			if c.Err == nil {
				var inner []ProtectedChange
				inner, c.Err = g.putBack(it, ts)
				out = append(out, inner...)
			}
			out = append(out, c)
		case st.IsDir():
			out = append(out, g.checkDir(it, ts, false)...)
		}
	}
	return out
}

// maxSiblings bounds the directory entries checkPin reads to find a git
// directory the command renamed.
const maxSiblings = 10000

// checkPin checks that a git directory is still the one recorded (same
// inode). When the command renamed it away (mv .git .gitY) and put
// something in its place (a .git file with "gitdir: elsewhere", another
// directory), what is there now is moved aside and the original, found
// by its inode among the entries of its parent, is renamed back. Under
// bwrap the directory is pinned by a bind and none of this can happen.
func checkPin(it *guardItem, ts string) []ProtectedChange {
	st, err := os.Lstat(it.path)
	if err == nil && st.IsDir() && inoOf(st) == it.entry.ino {
		return nil
	}
	c := ProtectedChange{Path: it.path, Deleted: err != nil}
	if err == nil {
		if c.KeptAs, c.Err = moveAside(it.path, ts); c.Err != nil {
			return []ProtectedChange{c}
		}
	}
	parent := filepath.Dir(it.path)
	f, err := os.Open(parent)
	if err == nil {
		names, _ := f.Readdirnames(maxSiblings)
		_ = f.Close()
		for _, n := range names {
			p := filepath.Join(parent, n)
			if st, err := os.Lstat(p); err == nil && st.IsDir() && inoOf(st) == it.entry.ino {
				c.Err = os.Rename(p, it.path)
				return []ProtectedChange{c}
			}
		}
	}
	c.Err = errors.New("the command moved the git directory away and it was not found beside it, so it could not be put back")
	return []ProtectedChange{c}
}

// checkDir undoes the changes under a protected directory: files created
// are moved aside, changed ones moved aside and restored, deleted ones
// restored. fresh: the directory was just re-created empty (restore all).
// putBack recreates it as snapshotted where nothing is now: a file from
// its snapshot, a directory with its mode and then its snapshotted
// content (the changes that made, see checkDir).
func (g *Guard) putBack(it *guardItem, ts string) ([]ProtectedChange, error) {
	if !it.entry.mode.IsDir() {
		return nil, restore(it.path, it.entry)
	}
	if err := os.MkdirAll(it.path, it.entry.mode.Perm()); err != nil {
		return nil, err
	}
	return g.checkDir(it, ts, true), nil
}

func (g *Guard) checkDir(it *guardItem, ts string, fresh bool) []ProtectedChange {
	var out []ProtectedChange
	if !fresh {
		seen := 0
		_ = filepath.WalkDir(it.path, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == it.path {
				return nil
			}
			if seen++; seen > 4*maxProtectedEntries {
				return filepath.SkipAll
			}
			rel, _ := filepath.Rel(it.path, p)
			if inert(d.Name()) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			i := slices.IndexFunc(it.dir, func(e snapEntry) bool { return e.rel == rel })
			if i < 0 {
				c := ProtectedChange{Path: p, Created: true}
				c.KeptAs, c.Err = moveAside(p, ts)
				out = append(out, c)
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			e := &it.dir[i]
			st, err := os.Lstat(p)
			if err != nil || e.mode.IsDir() && st.IsDir() {
				return nil
			}
			if !e.same(p, st) {
				c := ProtectedChange{Path: p}
				if e.big && !st.IsDir() {
					c.Err = errTooBig
					out = append(out, c)
					return nil
				}
				c.KeptAs, c.Err = moveAside(p, ts)
				if c.Err == nil {
					c.Err = restore(p, e)
				}
				out = append(out, c)
				if d.IsDir() {
					return filepath.SkipDir
				}
			}
			return nil
		})
	}
	for i := range it.dir {
		e := &it.dir[i]
		p := filepath.Join(it.path, e.rel)
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		c := ProtectedChange{Path: p, Deleted: true}
		if e.mode.IsDir() {
			c.Err = os.MkdirAll(p, e.mode.Perm())
		} else {
			c.Err = restore(p, e)
		}
		if !fresh || c.Err != nil {
			out = append(out, c)
		}
	}
	return out
}

// rejectedName matches the copies moveAside makes (NAME.rejected-TS or
// NAME.rejected-TS-N): they are left alone inside a protected directory.
// Nothing reads such a name (git hooks, agent definitions *.md and
// settings*.json all need their exact name).
var rejectedName = regexp.MustCompile(`\.rejected-[0-9]+(-[0-9]+)?$`)

// inert reports whether a name inside a protected directory is one that
// nothing runs or reads, so the guard neither records nor checks it: git's
// *.sample hooks (the bulk of .git/hooks; renaming one to its real name
// creates a new, guarded entry) and the guard's own .rejected- copies.
func inert(name string) bool {
	return strings.HasSuffix(name, ".sample") || rejectedName.MatchString(name)
}

// moveAside renames path to path.rejected-TS (a free name) and returns it.
func moveAside(path, ts string) (string, error) {
	dst := path + ".rejected-" + ts
	for n := 1; ; n++ {
		if _, err := os.Lstat(dst); err != nil {
			break
		}
		dst = path + ".rejected-" + ts + "-" + strconv.Itoa(n)
	}
	if err := os.Rename(path, dst); err != nil {
		return "", err
	}
	return dst, nil
}

// restore writes e back at path (which must not exist).
func restore(path string, e *snapEntry) error {
	switch {
	case e.mode&fs.ModeSymlink != 0:
		return os.Symlink(e.target, path)
	case e.mode.IsDir():
		return os.MkdirAll(path, e.mode.Perm())
	case e.content == nil:
		return errTooBig
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, e.mode.Perm())
	if err != nil {
		return err
	}
	_, err = f.Write(e.content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(path, e.mode.Perm())
	}
	return err
}

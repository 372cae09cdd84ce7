package instructions

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// Options drive one [Load].
type Options struct {
	// Cwd is the working directory (absolute).
	Cwd string
	// Files are the names searched in each directory.
	Files []string
	// UserFile is the user-level file (absolute), or "" for none.
	UserFile string
	// MaxBytes bounds the text kept from each file.
	MaxBytes int
	// MaxImportDepth bounds nested imports (0: none followed).
	MaxImportDepth int
	// Home resolves `@~/` imports; "" leaves them unresolved.
	Home string
}

// File is one loaded instruction file (or import).
type File struct {
	// Path is the file's path as found (not symlink-resolved).
	Path string
	// Text is the kept text (cut to MaxBytes).
	Text string
	// Size is the file's full size in bytes.
	Size int64
	// Cut reports that Text is shorter than the file.
	Cut bool
	// ImportedBy is the importing file's path ("" for a discovered file);
	// Depth is the import depth (0 for a discovered file).
	ImportedBy string
	Depth      int
	// Notes are problems met while loading the file's imports.
	Notes []string
}

// watched is one path whose state decides whether a cached text is still
// current: absent, or present with a size and a modification time.
type watched struct {
	path    string
	exists  bool
	size    int64
	modTime time.Time
}

func statOf(path string) watched {
	st, err := os.Stat(path)
	if err != nil {
		return watched{path: path}
	}
	return watched{path: path, exists: true, size: st.Size(), modTime: st.ModTime()}
}

func (w watched) current() bool {
	st, err := os.Stat(w.path)
	if err != nil {
		return !w.exists
	}
	return w.exists && st.Size() == w.size && st.ModTime().Equal(w.modTime)
}

// RepoRoot returns the nearest ancestor of dir (dir included) holding a
// `.git` entry, or "" outside a repository.
func RepoRoot(dir string) string {
	for d := filepath.Clean(dir); ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// Candidates returns the paths searched for o, in prompt order: the user
// file, then each configured name in every directory from the repository
// root (or the file-system root) down to o.Cwd.
func Candidates(o Options) []string {
	cwd := filepath.Clean(o.Cwd)
	var dirs []string
	stop := RepoRoot(cwd)
	for d := cwd; ; {
		dirs = append(dirs, d)
		if d == stop {
			break
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	var out []string
	if o.UserFile != "" {
		out = append(out, o.UserFile)
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		for _, name := range o.Files {
			out = append(out, filepath.Join(dirs[i], name))
		}
	}
	return out
}

// Load discovers and reads the instruction files for o, in prompt order,
// with their imports after each. It also returns every path whose change
// (appearing, disappearing, size or time) makes the result stale.
// Problems with individual files are notes, never errors.
func Load(o Options) (files []File, deps []watched) { //nolint:revive // deps are opaque: the plugin only compares them again
	root := RepoRoot(o.Cwd)
	seen := map[string]bool{} // real paths already included
	for _, p := range Candidates(o) {
		deps = append(deps, statOf(p))
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		fileRoot := root
		if p == o.UserFile {
			fileRoot = filepath.Dir(p)
		} else if fileRoot == "" {
			fileRoot = filepath.Dir(p)
		}
		l := loader{o: o, root: realOr(fileRoot), seen: seen}
		files = append(files, l.load(p, "", 0, nil)...)
		deps = append(deps, l.deps...)
	}
	return files, deps
}

func realOr(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

type loader struct {
	o    Options
	root string // real path imports must stay under
	seen map[string]bool
	deps []watched
}

// load reads path (found directly, or imported by `by` at depth) and its
// imports. chain holds the real paths of the importing files.
func (l *loader) load(path, by string, depth int, chain []string) []File {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		if by == "" {
			return []File{{Path: path, Depth: depth, Notes: []string{fmt.Sprintf("%s skipped: %s", path, reason(err))}}}
		}
		return nil // the importer notes it
	}
	if l.seen[real] {
		return nil
	}
	l.seen[real] = true
	f := File{Path: path, ImportedBy: by, Depth: depth}
	text, size, cut, err := readBounded(real, l.o.MaxBytes)
	if err != nil {
		f.Notes = append(f.Notes, fmt.Sprintf("%s skipped: %s", path, reason(err)))
		return []File{f}
	}
	f.Text, f.Size, f.Cut = text, size, cut
	out := []File{f}
	if depth >= l.o.MaxImportDepth {
		return out
	}
	chain = append(chain, real)
	for _, ref := range Imports(text) {
		target, note := l.resolve(path, ref, chain)
		if note != "" {
			out[0].Notes = append(out[0].Notes, note)
			continue
		}
		if target == "" {
			continue
		}
		l.deps = append(l.deps, statOf(target))
		out = append(out, l.load(target, path, depth+1, chain)...)
	}
	return out
}

// resolve turns an import reference of the file at from into a path, or
// returns a note saying why it is left out. An import already on the chain
// (a cycle) or already included resolves to "" silently.
func (l *loader) resolve(from, ref string, chain []string) (target, note string) {
	p := ref
	switch {
	case strings.HasPrefix(p, "~/"):
		if l.o.Home == "" {
			return "", fmt.Sprintf("import @%s in %s skipped: no home directory", ref, from)
		}
		p = filepath.Join(l.o.Home, p[2:])
	case !filepath.IsAbs(p):
		p = filepath.Join(filepath.Dir(from), p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Sprintf("import @%s in %s skipped: %s", ref, from, reason(err))
	}
	if !within(real, l.root) {
		return "", fmt.Sprintf("import @%s in %s skipped: it resolves to %s, outside %s", ref, from, real, l.root)
	}
	for _, c := range chain {
		if c == real {
			return "", ""
		}
	}
	if l.seen[real] {
		return "", ""
	}
	return p, ""
}

func within(p, root string) bool {
	if root == "/" {
		return true
	}
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}

func reason(err error) string {
	switch {
	case errors.Is(err, syscall.ELOOP) || strings.Contains(err.Error(), "too many links"): // EvalSymlinks' own loop error
		return "symlink loop"
	case errors.Is(err, fs.ErrNotExist):
		return "no such file"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

var errNotRegular = errors.New("not a regular file")

// readBounded reads at most limit bytes of the regular file at path (opened
// without blocking, so a FIFO never hangs the prompt), cut back to a UTF-8
// boundary. size is the file's full size.
func readBounded(path string, limit int) (text string, size int64, cut bool, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", 0, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", 0, false, err
	}
	if !st.Mode().IsRegular() {
		return "", 0, false, errNotRegular
	}
	buf := bufPool.Get().(*[]byte)
	defer bufPool.Put(buf)
	if cap(*buf) < limit+1 {
		*buf = make([]byte, limit+1)
	}
	b := (*buf)[:limit+1]
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", 0, false, err
	}
	b = b[:n]
	size = max64(st.Size(), int64(n))
	if n > limit {
		b = b[:limit]
		// Drop a rune the cut split in two.
		for j := len(b) - 1; j >= 0 && j >= len(b)-utf8.UTFMax; j-- {
			if utf8.RuneStart(b[j]) {
				if !utf8.FullRune(b[j:]) {
					b = b[:j]
				}
				break
			}
		}
		cut = true
	}
	return string(b), size, cut, nil
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0); return &b }}

// Imports returns the `@path` references of text, in order, as Claude Code
// reads them: a token starting with @ at the start of a line or after
// white space, outside inline code spans and fenced code blocks, that looks
// like a path (it has a '.' or a '/': "@alice" is a mention). Trailing
// sentence punctuation is not part of the path.
func Imports(text string) []string {
	var out []string
	fence := ""
	for line := range strings.Lines(text) {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		inCode := false
		for i := 0; i < len(line); i++ {
			c := line[i]
			if c == '`' {
				inCode = !inCode
				continue
			}
			if c != '@' || inCode || (i > 0 && line[i-1] != ' ' && line[i-1] != '\t') {
				continue
			}
			j := i + 1
			for j < len(line) && !isSpace(line[j]) && line[j] != '`' {
				j++
			}
			ref := strings.TrimRight(line[i+1:j], ".,;:!?)")
			// A path names a file: "@john" is a mention, "@docs/x.md" an import.
			if ref != "" && strings.ContainsAny(ref, "./") && !strings.Contains(ref, "@") {
				out = append(out, ref)
			}
			i = j - 1
		}
	}
	return out
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

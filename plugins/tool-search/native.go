package toolsearch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/dshgo/harness/services/workspaces/ignore"
)

// vcsDirNames are never listed by glob (dsh GLOB_VCS_EXCLUDES).
var vcsDirNames = []string{".git", ".svn", ".hg", ".bzr", ".jj", ".sl"}

var vcsDirs = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range vcsDirNames {
		m[n] = true
	}
	return m
}()

// searchBlockBytes is the read size of the native grep.
const searchBlockBytes = 64 * 1024

// found is one file hit of a search backend, relative to the search root.
type found struct {
	rel   string // slash-separated, relative to the root
	match Match  // grep only; Path unset
	mtime time.Time
}

// globMatch applies ripgrep's glob semantics: a pattern without "/" matches the
// file name at any depth; one with "/" matches the root-relative path (a leading
// "/" only anchors). "*" never crosses "/", "**" spans directories, {a,b} alternates.
func globMatch(pattern, rel string) bool {
	if strings.Contains(pattern, "/") {
		ok, _ := doublestar.Match(strings.TrimPrefix(pattern, "/"), rel)
		return ok
	}
	ok, _ := doublestar.Match(pattern, rel[strings.LastIndexByte(rel, '/')+1:])
	return ok
}

func invalidGlob(tool, pattern string) *Error {
	return &Error{Code: CodeInvalidPattern, Message: tool + " pattern rejected: invalid glob " + strconvQuote(pattern)}
}

func strconvQuote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// nativeGrep is the pure-Go grep: it walks root like ripgrep does by default
// (hidden entries skipped; .gitignore, .ignore, .rgignore and
// .git/info/exclude honoured, including those of parent directories; symlinks
// not followed; binary files skipped) and matches each line with Go's RE2
// regexp. A path matching include is whitelisted past the hidden and ignore
// rules, as in ripgrep; other files are skipped when include is set. file, when set, is one explicitly named file under root, searched
// regardless of hidden, ignore and include rules (as ripgrep does).
func nativeGrep(ctx context.Context, root, file string, re *regexp.Regexp, include string) ([]found, error) {
	pre := regexp.MustCompile("(?m:" + re.String() + ")")
	if include != "" && !doublestar.ValidatePattern(include) {
		return nil, invalidGlob("grep", include)
	}
	var out []found
	bufs := &scanBuffers{chunk: make([]byte, searchBlockBytes), buf: make([]byte, 0, searchBlockBytes)}
	if file != "" {
		return searchFile(ctx, bufs, filepath.Join(root, file), file, re, pre, out)
	}
	var walk func(dir, relDir string, chain ignore.Chain) error
	walk = func(dir, relDir string, chain ignore.Chain) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		chain = chain.WithDir(dir)
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil // unreadable directory: skipped, as ripgrep reports and continues
		}
		for _, e := range entries {
			name := e.Name()
			if e.Type()&fs.ModeSymlink != 0 {
				continue
			}
			abs := filepath.Join(dir, name)
			rel := name
			if relDir != "" {
				rel = relDir + "/" + name
			}
			// As in ripgrep, a path matching the include glob is whitelisted:
			// hidden and ignore rules do not apply to it.
			whitelisted := include != "" && globMatch(include, rel)
			if !whitelisted && (strings.HasPrefix(name, ".") || chain.Ignored(abs, e.IsDir())) {
				continue
			}
			switch {
			case e.IsDir():
				if err := walk(abs, rel, chain); err != nil {
					return err
				}
			case e.Type().IsRegular():
				if include != "" && !whitelisted {
					continue
				}
				if out, err = searchFile(ctx, bufs, abs, rel, re, pre, out); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(root, "", ignore.ParentChain(root)); err != nil {
		return nil, err
	}
	return out, nil
}

// scanBuffers are the read buffers of one grep, reused from file to file.
type scanBuffers struct{ chunk, buf []byte }

// searchFile appends the matching lines of one file. A NUL byte in the first
// block marks the file binary and skips it; a later NUL stops the search there.
func searchFile(ctx context.Context, bufs *scanBuffers, abs, rel string, re, pre *regexp.Regexp, out []found) ([]found, error) {
	f, err := os.Open(abs)
	if err != nil {
		return out, nil
	}
	defer f.Close()
	buf, chunk := bufs.buf[:0], bufs.chunk
	defer func() { bufs.buf = buf[:0] }() // keep a buffer that grew for a long line
	lineNo := 0
	first := true
	for {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		n, rerr := f.Read(chunk)
		buf = append(buf, chunk[:n]...)
		eof := errors.Is(rerr, io.EOF)
		if rerr != nil && !eof {
			return out, nil
		}
		end := len(buf)
		if !eof {
			end = bytes.LastIndexByte(buf, '\n') + 1
			if end == 0 {
				continue // a line longer than the buffer: read on
			}
		}
		block := buf[:end]
		if nul := bytes.IndexByte(block, 0); nul >= 0 {
			if first {
				return out, nil
			}
			block = block[:bytes.LastIndexByte(block[:nul], '\n')+1]
			eof = true
		}
		first = false
		if pre.Match(block) {
			out = matchLines(block, lineNo, rel, re, out)
		}
		lineNo += bytes.Count(block, []byte{'\n'})
		if eof {
			return out, nil
		}
		buf = append(buf[:0], buf[end:]...)
	}
}

func matchLines(block []byte, lineNo int, rel string, re *regexp.Regexp, out []found) []found {
	for len(block) > 0 {
		lineNo++
		line := block
		if nl := bytes.IndexByte(block, '\n'); nl >= 0 {
			line, block = block[:nl], block[nl+1:]
		} else {
			block = nil
		}
		if !re.Match(line) {
			continue
		}
		text := "(line is not valid UTF-8)"
		if utf8.Valid(line) {
			text = string(bytes.TrimSuffix(line, []byte{'\r'}))
		}
		out = append(out, found{rel: rel, match: Match{LineNumber: lineNo, Line: text}})
	}
	return out
}

// nativeGlob is the pure-Go glob: every regular file under root (hidden and
// ignored ones included, VCS metadata directories excluded, symlinks not
// followed) whose path matches pattern under globMatch.
func nativeGlob(ctx context.Context, root, pattern string) ([]found, error) {
	if !doublestar.ValidatePattern(strings.TrimPrefix(pattern, "/")) {
		return nil, invalidGlob("glob", pattern)
	}
	var out []found
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == root {
			return nil
		}
		if d.IsDir() {
			if vcsDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if !globMatch(pattern, rel) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		out = append(out, found{rel: rel, mtime: info.ModTime()})
		return nil
	})
	return out, err
}

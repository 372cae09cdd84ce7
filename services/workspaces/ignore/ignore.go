package ignore

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ignoreNames are the per-directory ignore files ripgrep reads by default, in
// increasing precedence.
var ignoreNames = []string{".gitignore", ".ignore", ".rgignore"}

// ignoreRule is one gitignore pattern line.
type ignoreRule struct {
	pattern  string // doublestar pattern, relative to the file's directory when anchored
	negate   bool   // "!pattern" re-includes
	dirOnly  bool   // "pattern/" matches directories only
	anchored bool   // contains a "/" (other than trailing): matched against the relative path
}

// ignoreFile is the parsed rules of one ignore file and the directory they are relative to.
type ignoreFile struct {
	base  string
	rules []ignoreRule
}

// parseIgnore parses gitignore syntax: blank lines and "#" comments skipped,
// trailing unescaped spaces trimmed, "\#" and "\!" literal, "!" negates, a
// trailing "/" restricts to directories, a "/" elsewhere anchors the pattern to
// base, and "**" spans directories.
func parseIgnore(base string, data []byte) *ignoreFile {
	f := &ignoreFile{base: base}
	for _, raw := range bytes.Split(data, []byte("\n")) {
		line := strings.TrimSuffix(string(raw), "\r")
		for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
			line = line[:len(line)-1]
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var r ignoreRule
		switch {
		case strings.HasPrefix(line, "!"):
			r.negate = true
			line = line[1:]
		case strings.HasPrefix(line, `\!`), strings.HasPrefix(line, `\#`):
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly = true
			line = strings.TrimRight(line, "/")
		}
		if line == "" {
			continue
		}
		if strings.Contains(line, "/") {
			r.anchored = true
			line = strings.TrimPrefix(line, "/")
		}
		if !doublestar.ValidatePattern(line) {
			continue
		}
		r.pattern = line
		f.rules = append(f.rules, r)
	}
	return f
}

// match reports whether the file decides abs (decided) and, if so, whether it
// ignores it. The last matching rule wins.
func (f *ignoreFile) match(abs string, isDir bool) (decided, ignored bool) {
	rel, err := filepath.Rel(f.base, abs)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return false, false
	}
	rel = filepath.ToSlash(rel)
	name := rel[strings.LastIndexByte(rel, '/')+1:]
	for i := len(f.rules) - 1; i >= 0; i-- {
		r := f.rules[i]
		if r.dirOnly && !isDir {
			continue
		}
		target := name
		if r.anchored {
			target = rel
		}
		if ok, _ := doublestar.Match(r.pattern, target); ok {
			return true, !r.negate
		}
	}
	return false, false
}

// Chain is the ignore files in effect for one directory, shallowest
// first; within a directory, lower precedence first. The zero value ignores
// nothing; a Chain is never modified in place, so it may be shared.
type Chain []*ignoreFile

// Ignored reports whether abs is excluded: the deepest, highest-precedence file
// that decides wins.
func (c Chain) Ignored(abs string, isDir bool) bool {
	for i := len(c) - 1; i >= 0; i-- {
		if decided, ign := c[i].match(abs, isDir); decided {
			return ign
		}
	}
	return false
}

// WithDir returns c extended by the ignore files found in dir.
func (c Chain) WithDir(dir string) Chain {
	out := c
	for _, name := range ignoreNames {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		if f := parseIgnore(dir, data); len(f.rules) > 0 {
			if len(out) == len(c) {
				out = append(Chain(nil), c...) // never share c's backing array
			}
			out = append(out, f)
		}
	}
	return out
}

// ParentChain collects the ignore files that apply to a search rooted at root
// from outside it: .git/info/exclude of the enclosing repository (lowest
// precedence), then the ignore files of every ancestor directory from "/" down
// to root's parent, as ripgrep does with --no-require-git and without
// --no-ignore-parent. The walk adds root's own files.
func ParentChain(root string) Chain {
	var ancestors []string
	for dir := root; ; dir = filepath.Dir(dir) {
		ancestors = append(ancestors, dir)
		if filepath.Dir(dir) == dir {
			break
		}
	}
	var chain Chain
	for _, dir := range ancestors {
		if info, err := os.Stat(filepath.Join(dir, ".git")); err == nil && info.IsDir() {
			if data, err := os.ReadFile(filepath.Join(dir, ".git", "info", "exclude")); err == nil {
				chain = append(chain, parseIgnore(dir, data))
			}
			break
		}
	}
	for i := len(ancestors) - 1; i >= 1; i-- {
		chain = chain.WithDir(ancestors[i])
	}
	return chain
}

package toolsearch

import (
	"context"
	"errors"
	"github.com/dshgo/harness/services/subprocess/sandbox"
	"github.com/dshgo/harness/services/tools/workdir"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Searcher runs grep and glob. With a Runner and an rg executable it uses
// ripgrep; otherwise the pure-Go implementation. Both produce the same
// canonical values: grep matches sorted by path then line, glob paths sorted
// newest first (ties by path), paths relative to the working directory.
type Searcher struct {
	// Runner runs ripgrep; nil selects the pure-Go implementation.
	Runner Runner
	// RG is the ripgrep executable (absolute path); "" selects the pure-Go implementation.
	RG string
	// Caps are the limits.
	Caps Caps
	// Contain returns the sandbox policy's checker for a call's working
	// directory; nil: no containment. Files it hides are left out of grep
	// and glob results and counted (GrepValue.Hidden, GlobValue.Hidden).
	Contain func(dir string) *sandbox.Checker
}

// hideDenied returns the paths (as the tools display them: relative to
// cwd, or absolute) that the checker of cwd hides; nil without
// containment or with the sandbox off.
func (s *Searcher) hideDenied(cwd string, paths []string) (hidden map[string]bool) {
	if s.Contain == nil {
		return nil
	}
	c := s.Contain(cwd)
	if !c.Enabled() {
		return nil
	}
	hidden = map[string]bool{}
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		abs := filepath.FromSlash(p)
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(cwd, abs)
		}
		if c.Hidden(abs) {
			hidden[p] = true
		}
	}
	return hidden
}

// HideGrep leaves out of v the matches in files the sandbox policy hides
// and counts those files in v.Hidden.
func (s *Searcher) HideGrep(cwd string, v GrepValue) GrepValue {
	paths := make([]string, len(v.Matches))
	for i, m := range v.Matches {
		paths[i] = m.Path
	}
	hidden := s.hideDenied(cwd, paths)
	if len(hidden) == 0 {
		return v
	}
	v.Matches = slices.DeleteFunc(slices.Clone(v.Matches), func(m Match) bool { return hidden[m.Path] })
	v.Hidden = len(hidden)
	return v
}

// HideGlob leaves out of v the paths the sandbox policy hides and counts
// them in v.Hidden.
func (s *Searcher) HideGlob(cwd string, v GlobValue) GlobValue {
	hidden := s.hideDenied(cwd, v.Paths)
	if len(hidden) == 0 {
		return v
	}
	v.Paths = slices.DeleteFunc(slices.Clone(v.Paths), func(p string) bool { return hidden[p] })
	v.Hidden = len(hidden)
	return v
}

// UsesRipgrep reports whether s runs ripgrep.
func (s *Searcher) UsesRipgrep() bool { return s.Runner != nil && s.RG != "" }

// searchRoot resolves a search's working directory (workdir.Default of cwd)
// and its path argument against it ("" means the directory itself), and
// stats the result; a missing path is the tool's missingPath error.
func searchRoot(tool, cwd string, p *string) (dir, target string, info os.FileInfo, err error) {
	if dir, err = workdir.Default(cwd); err != nil {
		return "", "", nil, err
	}
	switch {
	case p == nil:
		target = filepath.Clean(dir)
	case filepath.IsAbs(*p):
		target = filepath.Clean(*p)
	default:
		target = filepath.Join(dir, *p)
	}
	if info, err = os.Stat(target); err != nil {
		return "", "", nil, missingPath(tool, target, err)
	}
	return dir, target, info, nil
}

// display renders abs relative to the working directory when inside it.
func display(cwd, abs string) string {
	rel, err := filepath.Rel(cwd, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return abs
	}
	return filepath.ToSlash(rel)
}

func (s *Searcher) timeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.Caps.Timeout > 0 {
		return context.WithTimeout(ctx, s.Caps.Timeout)
	}
	return context.WithCancel(ctx)
}

func missingPath(tool, abs string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return &Error{Code: CodeFailed, Message: tool + " search failed: " + strconvQuote(abs) + " does not exist", Err: err}
	}
	return &Error{Code: CodeFailed, Message: tool + " search failed: " + err.Error(), Err: err}
}

// Grep searches file contents (B5). cwd is the session working directory.
func (s *Searcher) Grep(ctx context.Context, cwd string, args GrepArgs) (GrepValue, error) {
	if err := ValidateGrep(args); err != nil {
		return GrepValue{}, err
	}
	cwd, target, info, err := searchRoot("grep", cwd, args.Path)
	if err != nil {
		return GrepValue{}, err
	}
	root, file := target, ""
	if !info.IsDir() {
		root, file = filepath.Dir(target), filepath.Base(target)
	}
	include := ""
	if args.Include != nil {
		include = *args.Include
	}
	ctx, cancel := s.timeout(ctx)
	defer cancel()
	var hits []found
	if s.UsesRipgrep() {
		var stdout []byte
		var none bool
		stdout, none, err = runRipgrep(ctx, s.Runner, "grep", s.RG, rgGrepArgv(args.Pattern, include, file), root, s.Caps)
		if err == nil && !none {
			hits, err = parseRgJSON(stdout)
		}
	} else {
		var re *regexp.Regexp
		re, err = regexp.Compile(args.Pattern)
		if err != nil {
			return GrepValue{}, &Error{Code: CodeInvalidPattern, Message: "grep pattern rejected: " + err.Error(), Err: err}
		}
		hits, err = nativeGrep(ctx, root, file, re, include)
		if err != nil && ctx.Err() != nil {
			err = abortedError("grep", ctx.Err())
		}
	}
	if err != nil {
		return GrepValue{}, err
	}
	matches := make([]Match, len(hits))
	for i, h := range hits {
		m := h.match
		m.Path = display(cwd, filepath.Join(root, filepath.FromSlash(h.rel)))
		matches[i] = m
	}
	slices.SortStableFunc(matches, func(a, b Match) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return a.LineNumber - b.LineNumber
	})
	return GrepValue{Matches: matches}, nil
}

// Glob lists files matching a pattern (B6). cwd is the session working directory.
func (s *Searcher) Glob(ctx context.Context, cwd string, args GlobArgs) (GlobValue, error) {
	if err := ValidateGlob(args); err != nil {
		return GlobValue{}, err
	}
	cwd, root, info, err := searchRoot("glob", cwd, args.Path)
	if err != nil {
		return GlobValue{}, err
	}
	if !info.IsDir() {
		return GlobValue{}, &Error{Code: CodeFailed, Message: "glob search failed: " + strconvQuote(root) + " is not a directory"}
	}
	ctx, cancel := s.timeout(ctx)
	defer cancel()
	var hits []found
	if s.UsesRipgrep() {
		var stdout []byte
		var none bool
		stdout, none, err = runRipgrep(ctx, s.Runner, "glob", s.RG, rgGlobArgv(args.Pattern), root, s.Caps)
		if err == nil && !none {
			hits = statPaths(root, stdout)
		}
	} else {
		hits, err = nativeGlob(ctx, root, args.Pattern)
		if err != nil && ctx.Err() != nil {
			err = abortedError("glob", ctx.Err())
		}
	}
	if err != nil {
		return GlobValue{}, err
	}
	slices.SortStableFunc(hits, func(a, b found) int {
		if c := b.mtime.Compare(a.mtime); c != 0 {
			return c
		}
		return strings.Compare(a.rel, b.rel)
	})
	paths := make([]string, len(hits))
	for i, h := range hits {
		paths[i] = display(cwd, filepath.Join(root, filepath.FromSlash(h.rel)))
	}
	return GlobValue{Root: display(cwd, root), Paths: paths}, nil
}

// statPaths turns `rg --files` output into hits with modification times; a
// file that vanished since keeps the zero time and sorts last.
func statPaths(root string, stdout []byte) []found {
	var out []found
	for line := range strings.SplitSeq(string(stdout), "\n") {
		if line == "" {
			continue
		}
		rel := filepath.ToSlash(strings.TrimPrefix(line, "./"))
		var mtime time.Time
		if info, err := os.Stat(filepath.Join(root, line)); err == nil {
			mtime = info.ModTime()
		}
		out = append(out, found{rel: rel, mtime: mtime})
	}
	return out
}

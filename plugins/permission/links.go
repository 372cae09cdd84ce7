package permission

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// maxLinkScan bounds the directory entries visited per deny rule when
// looking for another name of a hard-linked file.
const maxLinkScan = 20000

var errStopScan = errors.New("stop")

// linkDenied returns the deny rule on tool that names another hard link of
// the file at abs (same device and inode): a read-deny rule on `.env`
// also refuses `read ln-to-env`. Only files with more than one link are
// checked; each rule's pattern is expanded from its static prefix (the
// working directory for a relative pattern), visiting at most maxLinkScan
// entries.
func (p *Policy) linkDenied(tool, abs, cwd string) (Rule, bool) {
	fi, err := os.Stat(abs)
	if err != nil || !fi.Mode().IsRegular() || linkCount(fi) < 2 {
		return Rule{}, false
	}
	for _, r := range p.deny {
		if r.hasArg && p.applies(r, tool) && sameFileMatches(r, fi, cwd, p.home) {
			return r, true
		}
	}
	return Rule{}, false
}

// sameFileMatches reports whether a path matched by r's pattern is the same
// file as fi.
func sameFileMatches(r Rule, fi os.FileInfo, cwd, home string) bool {
	pat := filePattern(r.arg, home)
	if !filepath.IsAbs(pat) {
		pat = filepath.Join(cwd, pat)
	}
	pat = filepath.ToSlash(filepath.Clean(pat))
	// The static prefix: the directories before the first component with a
	// glob metacharacter.
	segs := strings.Split(pat, "/")
	static := 0
	for static < len(segs) && !strings.ContainsAny(segs[static], "*?[{\\") {
		static++
	}
	if static == len(segs) {
		other, err := os.Stat(pat)
		return err == nil && os.SameFile(fi, other)
	}
	root := strings.Join(segs[:static], "/")
	if root == "" {
		root = "/"
	}
	rest := strings.Join(segs[static:], "/")
	found, visited := false, 0
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if visited++; visited > maxLinkScan {
			return errStopScan
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return nil
		}
		if ok, _ := doublestar.Match(rest, filepath.ToSlash(rel)); !ok {
			return nil
		}
		if other, err := os.Stat(p); err == nil && os.SameFile(fi, other) {
			found = true
			return errStopScan
		}
		return nil
	})
	return found
}

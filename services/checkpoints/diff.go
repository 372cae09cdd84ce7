package checkpoints

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/aymanbagabas/go-udiff"
)

// MaxDiffBytes bounds the files Sides reads: a larger file (on either
// side) has no diff.
const MaxDiffBytes = 1 << 20

// Differing lists the paths whose entries differ between a and b (files
// and links; directories only by presence), unsorted. A nil b differs in
// nothing.
func Differing(a, b *Checkpoint) []string {
	if a == nil || b == nil {
		return nil
	}
	var out []string
	for p, e := range a.Entries {
		if o, ok := b.Entries[p]; !ok || (e.Kind != KindDir && o != e) {
			out = append(out, p)
		}
	}
	for p := range b.Entries {
		if _, ok := a.Entries[p]; !ok {
			out = append(out, p)
		}
	}
	return out
}

// Sides returns path (slash-separated, relative to the workspace) as
// checkpoint c recorded it and as it is on disk now; a side that does not
// exist is nil. ok is false when either side is not a small text file
// (a directory, a link, binary or over MaxDiffBytes) or cannot be read.
func (s *Store) Sides(c *Checkpoint, path string) (then, now []byte, ok bool) {
	abs := filepath.Join(s.root, filepath.FromSlash(path))
	if fi, err := os.Lstat(abs); err == nil {
		if !fi.Mode().IsRegular() || fi.Size() > MaxDiffBytes {
			return nil, nil, false
		}
		if now, err = os.ReadFile(abs); err != nil {
			return nil, nil, false
		}
	}
	if e, found := c.Entries[path]; found {
		if e.Kind != KindFile || e.Size > MaxDiffBytes {
			return nil, nil, false
		}
		var err error
		if then, err = s.Content(e); err != nil {
			return nil, nil, false
		}
	}
	return then, now, isText(then) && isText(now)
}

// UnifiedDiff is the unified diff from a (named aName) to b (bName), cut
// to maxLines lines (0: not cut) with a last line saying how many more
// there were; "" when a and b are equal.
func UnifiedDiff(aName, bName string, a, b []byte, maxLines int) string {
	if bytes.Equal(a, b) {
		return ""
	}
	d := udiff.Unified(aName, bName, string(a), string(b))
	if maxLines <= 0 {
		return d
	}
	lines := strings.SplitAfter(d, "\n")
	if len(lines) > maxLines {
		d = strings.Join(lines[:maxLines], "") + fmt.Sprintf("… %d more lines\n", len(lines)-maxLines)
	}
	return d
}

// DiffStat counts the added and removed lines of a unified diff (the
// file header before the first hunk is not counted).
func DiffStat(diff string) (added, removed int) {
	hunk := false
	for line := range strings.Lines(diff) {
		switch {
		case strings.HasPrefix(line, "@@"):
			hunk = true
		case !hunk:
		case strings.HasPrefix(line, "+"):
			added++
		case strings.HasPrefix(line, "-"):
			removed++
		}
	}
	return added, removed
}

// isText reports whether b looks like text: valid UTF-8 without NUL bytes.
func isText(b []byte) bool { return utf8.Valid(b) && bytes.IndexByte(b, 0) < 0 }

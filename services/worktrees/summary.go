package worktrees

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// maxListed bounds the commits and the changed files a Summary lists.
const maxListed = 10000

// Change is one file a worktree changes against its base.
type Change struct {
	// Path is relative to the worktree, slash-separated.
	Path string `json:"path"`
	// Committed: a commit since the base changed it. Uncommitted: the
	// working tree or the index differs from HEAD. Untracked: a new file
	// git does not track (and does not ignore).
	Committed   bool `json:"committed,omitempty"`
	Uncommitted bool `json:"uncommitted,omitempty"`
	Untracked   bool `json:"untracked,omitempty"`
}

// State is "committed", "uncommitted", "committed+uncommitted" or
// "untracked".
func (c Change) State() string {
	switch {
	case c.Untracked:
		return "untracked"
	case c.Committed && c.Uncommitted:
		return "committed+uncommitted"
	case c.Committed:
		return "committed"
	}
	return "uncommitted"
}

// Commit is one commit since the base.
type Commit struct {
	// Hash is the abbreviated commit hash.
	Hash string `json:"hash"`
	// Subject is the first line of the message.
	Subject string `json:"subject"`
}

// Summary is what a worktree's branch holds against its base.
type Summary struct {
	Worktree *Worktree `json:"worktree"`
	// Head is the worktree's HEAD commit.
	Head string `json:"head"`
	// Commits are base..HEAD, newest first.
	Commits []Commit `json:"commits"`
	// Changes are the files changed (committed, uncommitted, untracked),
	// sorted by path.
	Changes []Change `json:"changes"`
	// DiffStat is git diff --stat of the working tree against the base
	// (tracked files; untracked ones are in Changes only).
	DiffStat string `json:"diffStat"`
	// Unmerged counts the commits on the branch that no other branch has.
	Unmerged int `json:"unmerged"`
	// Truncated: a list was cut at 10,000 entries.
	Truncated bool `json:"truncated,omitempty"`
}

// Dirty reports uncommitted changes or untracked files.
func (s *Summary) Dirty() bool {
	return slices.ContainsFunc(s.Changes, func(c Change) bool { return c.Uncommitted || c.Untracked })
}

func (s *Summary) count(f func(Change) bool) int {
	n := 0
	for _, c := range s.Changes {
		if f(c) {
			n++
		}
	}
	return n
}

// Summarize reads what w's branch holds: its commits since the base,
// the files it changes (committed, uncommitted, untracked), a diff stat
// and how many of its commits no other branch has.
func Summarize(ctx context.Context, w *Worktree) (*Summary, error) {
	head, err := git(ctx, w.Dir, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return nil, fmt.Errorf("worktree %q: %w", w.Name, err)
	}
	s := &Summary{Worktree: w, Head: strings.TrimSpace(head)}
	steps := []func(*Summary, context.Context) error{(*Summary).readCommits, (*Summary).readChanges, (*Summary).readStat, (*Summary).readUnmerged}
	for _, step := range steps {
		if err := step(s, ctx); err != nil {
			return nil, fmt.Errorf("worktree %q: %w", w.Name, err)
		}
	}
	return s, nil
}

func (s *Summary) readCommits(ctx context.Context) error {
	out, err := git(ctx, s.Worktree.Dir, "log", "--no-color", fmt.Sprintf("--max-count=%d", maxListed+1), "--format=%h %s", s.Worktree.Base+"..HEAD")
	if err != nil {
		return err
	}
	for _, l := range lines(out) {
		if len(s.Commits) == maxListed {
			s.Truncated = true
			break
		}
		h, subj, _ := strings.Cut(l, " ")
		s.Commits = append(s.Commits, Commit{Hash: h, Subject: subj})
	}
	return nil
}

func (s *Summary) readChanges(ctx context.Context) error {
	dir, base := s.Worktree.Dir, s.Worktree.Base
	committed, err := git(ctx, dir, "diff", "--no-renames", "--name-only", "-z", base, "HEAD", "--")
	if err != nil {
		return err
	}
	uncommitted, err := git(ctx, dir, "diff", "--no-renames", "--name-only", "-z", "HEAD", "--")
	if err != nil {
		return err
	}
	untracked, err := git(ctx, dir, "ls-files", "-z", "--others", "--exclude-standard")
	if err != nil {
		return err
	}
	byPath := map[string]*Change{}
	add := func(list string, set func(*Change)) {
		for _, p := range strings.Split(list, "\x00") {
			if p == "" {
				continue
			}
			c := byPath[p]
			if c == nil {
				if len(byPath) >= maxListed {
					s.Truncated = true
					continue
				}
				c = &Change{Path: p}
				byPath[p] = c
			}
			set(c)
		}
	}
	add(committed, func(c *Change) { c.Committed = true })
	add(uncommitted, func(c *Change) { c.Uncommitted = true })
	add(untracked, func(c *Change) { c.Untracked = true })
	for _, c := range byPath {
		s.Changes = append(s.Changes, *c)
	}
	slices.SortFunc(s.Changes, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	return nil
}

func (s *Summary) readStat(ctx context.Context) error {
	out, err := git(ctx, s.Worktree.Dir, "diff", "--no-color", "--stat", s.Worktree.Base, "--")
	s.DiffStat = strings.TrimRight(out, "\n")
	return err
}

func (s *Summary) readUnmerged(ctx context.Context) error {
	out, err := git(ctx, s.Worktree.Dir, "rev-list", "--count", "HEAD", "--not", "--exclude="+s.Worktree.Branch, "--branches")
	if err != nil {
		return err
	}
	_, err = fmt.Sscan(strings.TrimSpace(out), &s.Unmerged)
	return err
}

// Overlap is a file that two live worktrees of one repository both
// change.
type Overlap struct {
	// File is the path both change, relative to the worktrees.
	File string
	// A and B are the worktrees' names.
	A, B string
}

// String is the warning: `worktrees "a" and "b" both change FILE`.
func (o Overlap) String() string {
	return fmt.Sprintf("worktrees %q and %q both change %s", o.A, o.B, o.File)
}

// Overlaps returns the files that two of the summaries both change, one
// entry per pair and file, sorted by file; summaries of different
// repositories never overlap.
func Overlaps(sums []*Summary) []Overlap {
	var out []Overlap
	for i, a := range sums {
		files := map[string]bool{}
		for _, c := range a.Changes {
			files[c.Path] = true
		}
		for _, b := range sums[i+1:] {
			if a.Worktree.CommonDir != b.Worktree.CommonDir {
				continue
			}
			for _, c := range b.Changes {
				if files[c.Path] {
					out = append(out, Overlap{File: c.Path, A: a.Worktree.Name, B: b.Worktree.Name})
				}
			}
		}
	}
	slices.SortStableFunc(out, func(x, y Overlap) int { return strings.Compare(x.File, y.File) })
	return out
}

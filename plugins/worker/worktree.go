package worker

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/dshgo/harness/services/worktrees"
)

// worktreesDir is where worktree jobs' worktrees live, inside the work
// root (hidden from the other jobs; the sweep leaves it alone: its name
// is no job's).
const worktreesDir = ".worktrees"

// jobWorktree returns the worktree of a worktree job: made from Dir's
// HEAD on the first attempt, the same one on a retry (its name's
// worktree of Dir's repository, made under this work root).
func (s *Service) jobWorktree(ctx context.Context, job *rivertype.JobRow, a RunArgs) (*worktrees.Worktree, error) {
	name := a.Worktree
	if name == WorktreeAuto {
		name = "job-" + strconv.FormatInt(job.ID, 10)
	}
	m := worktrees.New(filepath.Join(s.cfg.WorkRoot, worktreesDir))
	list, err := m.List(ctx, a.Dir)
	if err != nil {
		return nil, river.JobCancel(fmt.Errorf("job %d: worktree of %s: %w", job.ID, a.Dir, err))
	}
	for _, w := range list {
		if w.Name == name {
			return w, nil // an earlier attempt's
		}
	}
	w, err := m.Create(ctx, a.Dir, name)
	if err != nil {
		// A taken name or a directory that is no repository: trying again
		// changes nothing.
		return nil, river.JobCancel(fmt.Errorf("job %d: %w", job.ID, err))
	}
	s.log.Info("worker: job worktree", "job", job.ID, "branch", w.Branch, "dir", w.Dir)
	return w, nil
}

// finishWorktree summarizes a completed job's worktree and removes it
// when nothing is uncommitted (worktrees.Manager.Remove: its branch stays
// when it has commits); a dirty one is kept, and the output says so.
func (s *Service) finishWorktree(ctx context.Context, id int64, w *worktrees.Worktree) *WorktreeOutput {
	out := &WorktreeOutput{Name: w.Name, Branch: w.Branch, Dir: w.Dir}
	if sum, err := worktrees.Summarize(ctx, w); err == nil {
		for _, c := range sum.Commits {
			out.Commits = append(out.Commits, c.Hash+" "+c.Subject)
		}
		for _, c := range sum.Changes {
			out.Changed = append(out.Changed, c.Path+" ("+c.State()+")")
		}
	}
	if s.cfg.KeepWorkDirs {
		out.Kept = "keepWorkDirs"
		return out
	}
	m := worktrees.New(filepath.Join(s.cfg.WorkRoot, worktreesDir))
	if _, err := m.Remove(ctx, w); err != nil {
		out.Kept = err.Error()
		if !errors.Is(err, worktrees.ErrDirty) {
			s.log.Warn("worker: removing a job's worktree", "job", id, "err", err)
		}
		return out
	}
	out.Removed = true
	return out
}

package worker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/dshgo/harness/services/subprocess"
)

// workDir returns the job's work dir, making it on the first attempt: a
// git clone of Repo (at Ref), or an empty directory; Dir as it is. A dir
// an earlier attempt made is reused as it was left.
func (s *Service) workDir(ctx context.Context, job *rivertype.JobRow, a RunArgs) (string, error) {
	if a.Dir != "" {
		if fi, err := os.Stat(a.Dir); err != nil || !fi.IsDir() {
			return "", river.JobCancel(fmt.Errorf("job %d: dir %s: not a directory on this worker", job.ID, a.Dir))
		}
		return a.Dir, nil
	}
	if err := os.MkdirAll(s.cfg.WorkRoot, 0o700); err != nil {
		return "", fmt.Errorf("work root: %w", err)
	}
	dir := filepath.Join(s.cfg.WorkRoot, SessionID(job))
	if _, err := os.Stat(dir); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(s.cfg.WorkRoot, ".new-"+SessionID(job)+"-")
	if err != nil {
		return "", fmt.Errorf("work dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	if a.Repo != "" {
		if err := s.clone(ctx, tmp, a); err != nil {
			return "", fmt.Errorf("job %d: %w", job.ID, err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", fmt.Errorf("work dir: %w", err)
	}
	return dir, nil
}

// clone clones a.Repo into dir (which exists and is empty) and checks out
// a.Ref: git through the subprocess service, with the scrubbed
// environment and no terminal prompts.
func (s *Service) clone(ctx context.Context, dir string, a RunArgs) error {
	// No hook or fsmonitor of the (agent-writable) repository runs.
	git := []string{"git", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null"}
	steps := [][]string{append(slices.Clone(git), "clone", "--quiet", "--", a.Repo, ".")}
	if a.Ref != "" {
		steps = append(steps, append(slices.Clone(git), "fetch", "--quiet", "origin", "--", a.Ref),
			append(slices.Clone(git), "checkout", "--quiet", "--detach", "FETCH_HEAD"))
	}
	for _, argv := range steps {
		res, err := s.sp.Run(subprocess.Spec{Context: ctx, Argv: argv, Dir: dir,
			Env:   map[string]string{"GIT_TERMINAL_PROMPT": "0"},
			Stdin: subprocess.IgnoreStdin(), Stdout: subprocess.Collect(64 << 10), Stderr: subprocess.Collect(64 << 10),
			Grace: s.cfg.Grace})
		if err != nil {
			return fmt.Errorf("git %s: %w", argv[len(git)], err)
		}
		if res.Outcome.ExitCode == nil || *res.Outcome.ExitCode != 0 {
			return fmt.Errorf("git %s (%s): %s", argv[len(git)], res.Outcome, tail(res.Stderr.Text()))
		}
	}
	return nil
}

// writePatch stores a job's manifest patch in a private file for its run.
func (s *Service) writePatch(job *rivertype.JobRow, patch string) (string, error) {
	f, err := os.CreateTemp(s.cfg.WorkRoot, ".patch-"+SessionID(job)+"-*.yml")
	if err != nil {
		return "", fmt.Errorf("job patch: %w", err)
	}
	_, err = f.WriteString(patch)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", errors.Join(errors.New("job patch"), err)
	}
	return f.Name(), nil
}

// sweepEvery is how often a working worker sweeps its work root.
const sweepEvery = 10 * time.Minute

var workDirRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^job-(\d{1,19})-\d{8}T\d{6}$`) })

// sweepWorkDirs removes the work dirs in WorkRoot of jobs that have ended
// elsewhere: a job handed back by this worker (a drain, or its heartbeats
// missed) and completed, cancelled or discarded on another worker leaves
// its dir here, which that worker cannot remove. The job's state decides,
// as in [Service.cleanWorkDir]: completed (or no longer in the queue:
// River deleted it) is removed, cancelled and discarded too unless
// KeepFailed; a job still to run (or running, here or elsewhere) keeps its
// dir. Nothing is removed with KeepWorkDirs. Other entries (partial clones
// being made, patch files) are left alone: a shared work root holds the
// live ones of other workers.
func (s *Service) sweepWorkDirs(ctx context.Context) {
	if s.cfg.KeepWorkDirs {
		return
	}
	ents, err := os.ReadDir(s.cfg.WorkRoot)
	if err != nil {
		return // no work root yet
	}
	dirs := map[int64][]string{}
	var ids []int64
	for _, e := range ents {
		g := workDirRE().FindStringSubmatch(e.Name())
		if g == nil || !e.IsDir() {
			continue
		}
		id, err := strconv.ParseInt(g[1], 10, 64)
		if err != nil {
			continue
		}
		if dirs[id] == nil {
			ids = append(ids, id)
		}
		dirs[id] = append(dirs[id], e.Name())
	}
	if len(ids) == 0 {
		return
	}
	rows, err := s.pool.Query(ctx, `SELECT id, state::text, created_at FROM `+s.q("river_job")+` WHERE id = ANY($1)`, ids)
	if err != nil {
		s.log.Warn("worker: sweeping the work root", "err", err)
		return
	}
	type row struct {
		ID      int64
		State   string
		Created time.Time
	}
	found, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	if err != nil {
		s.log.Warn("worker: sweeping the work root", "err", err)
		return
	}
	state := map[string]string{} // session id → state
	for _, r := range found {
		state[SessionID(&rivertype.JobRow{ID: r.ID, CreatedAt: r.Created})] = r.State
	}
	var removed []string
	for _, id := range ids {
		for _, name := range dirs[id] {
			st, ok := state[name]
			switch {
			case !ok && s.cfg.KeepFailed: // gone from the queue: its end is not known
				continue
			case !ok, st == string(rivertype.JobStateCompleted):
			case st == string(rivertype.JobStateCancelled) || st == string(rivertype.JobStateDiscarded):
				if s.cfg.KeepFailed {
					continue
				}
			default:
				continue // still to run
			}
			if err := os.RemoveAll(filepath.Join(s.cfg.WorkRoot, name)); err != nil {
				s.log.Warn("worker: removing work dir", "dir", name, "err", err)
				continue
			}
			removed = append(removed, name)
		}
	}
	if len(removed) > 0 {
		s.log.Info("worker: removed the work dirs of jobs that ended on other workers", "dirs", removed)
	}
}

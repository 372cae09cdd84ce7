package worker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

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

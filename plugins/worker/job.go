package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/worktrees"
)

// RunArgs are a harness_run job's arguments: one agent turn.
type RunArgs struct {
	// Prompt is the user prompt of the turn (required).
	Prompt string `json:"prompt"`
	// Repo is a git URL or a path to a git repository, cloned into the
	// job's fresh work dir (at Ref when set). Exclusive with Dir.
	Repo string `json:"repo,omitempty"`
	// Ref is a branch, tag or commit of Repo (default: its HEAD).
	Ref string `json:"ref,omitempty"`
	// Dir is an existing absolute directory the run works in, in place
	// (the same path must exist on every worker). Empty with Repo empty:
	// a fresh empty work dir.
	Dir string `json:"dir,omitempty"`
	// Worktree, with Dir, runs the job in a git worktree of Dir's
	// repository instead of in Dir itself: branch harness/NAME from Dir's
	// HEAD, checked out under the work root (hidden from the other jobs),
	// so several jobs can work on one repository at once. "auto" names it
	// after the job (job-ID). Removed when the job completes with nothing
	// uncommitted (its branch stays when it has commits); kept otherwise
	// (`harness worktree list|prune` in Dir).
	Worktree string `json:"worktree,omitempty"`
	// Patch is a manifest patch layer (YAML) applied over the worker's
	// manifest for this run (docs/manifest.md).
	Patch string `json:"patch,omitempty"`
	// Model is the route provider/model (default: the agent row's).
	Model string `json:"model,omitempty"`
	// MaxSteps bounds the model calls of the turn (default: the agent
	// row's maxSteps).
	MaxSteps int `json:"maxSteps,omitempty"`
	// MaxCostUSD and MaxTokens cap the job's session (over the agent
	// row's budget; see agent.Budget): a run the budget stops is
	// cancelled, not retried, with reason "budget".
	MaxCostUSD float64 `json:"maxCostUsd,omitempty"`
	MaxTokens  int64   `json:"maxTokens,omitempty"`
	// Key identifies the run for unique submissions: when set, only Key
	// (not the other fields) decides what a duplicate is.
	Key string `json:"key,omitempty" river:"unique"`
}

// Kind is River's job kind of a run.
func (RunArgs) Kind() string { return "harness_run" }

// MaxPatchBytes bounds a job's manifest patch.
const MaxPatchBytes = 1 << 20

func (a RunArgs) validate() error {
	switch {
	case strings.TrimSpace(a.Prompt) == "":
		return errors.New("prompt: required")
	case a.Repo != "" && a.Dir != "":
		return errors.New("repo and dir are mutually exclusive")
	case a.Dir != "" && !filepath.IsAbs(a.Dir):
		return fmt.Errorf("dir %q: must be an absolute path", a.Dir)
	case a.Ref != "" && a.Repo == "":
		return errors.New("ref: needs repo")
	case a.Worktree != "" && a.Dir == "":
		return errors.New("worktree: needs dir (a job with repo already works in a clone of its own)")
	case strings.HasPrefix(a.Ref, "-") || strings.HasPrefix(a.Repo, "-"):
		return errors.New("repo and ref must not start with '-'")
	case a.MaxSteps < 0:
		return fmt.Errorf("maxSteps %d: must not be negative", a.MaxSteps)
	case a.MaxCostUSD < 0 || math.IsNaN(a.MaxCostUSD) || math.IsInf(a.MaxCostUSD, 0):
		return fmt.Errorf("maxCostUsd %v: want a positive number of US dollars", a.MaxCostUSD)
	case a.MaxTokens < 0:
		return fmt.Errorf("maxTokens %d: must not be negative", a.MaxTokens)
	case len(a.Patch) > MaxPatchBytes:
		return fmt.Errorf("patch: %d bytes, more than %d", len(a.Patch), MaxPatchBytes)
	}
	if a.Model != "" {
		if _, _, err := llm.SplitRoute(a.Model); err != nil {
			return fmt.Errorf("model: %w", err)
		}
	}
	if a.Patch != "" {
		if _, err := manifest.ParsePatch("<job patch>", []byte(a.Patch)); err != nil {
			return fmt.Errorf("patch: %w", err)
		}
	}
	if a.Worktree != "" && a.Worktree != WorktreeAuto {
		if err := worktrees.ValidateName(a.Worktree); err != nil {
			return fmt.Errorf("worktree: %w", err)
		}
	}
	return nil
}

// WorktreeAuto is the RunArgs.Worktree value that names the worktree
// after the job.
const WorktreeAuto = "auto"

// SessionID is the id of job's session: "job-ID-CREATED" (CREATED the
// job's creation time, so ids stay unique if the queue is ever reset).
func SessionID(job *rivertype.JobRow) string {
	return fmt.Sprintf("job-%d-%s", job.ID, job.CreatedAt.UTC().Format("20060102T150405"))
}

// RunSpec is what a job's run process reads on stdin.
type RunSpec struct {
	JobID     int64  `json:"jobId"`
	Attempt   int    `json:"attempt"`
	SessionID string `json:"sessionId"`
	Prompt    string `json:"prompt"`
	Model     string `json:"model,omitempty"`
	MaxSteps  int    `json:"maxSteps,omitempty"`
	// Budget caps the session (the job's MaxCostUSD and MaxTokens).
	Budget agent.Budget `json:"budget,omitzero"`
	// Resume: the session exists and its turn was cut short; continue it
	// (no new prompt).
	Resume bool `json:"resume,omitempty"`
	// Hide are denyRead entries (absolute, glob characters escaped) the
	// run adds to its sandbox policy before its session starts: the work
	// root, which holds the other jobs' work dirs and patch files (the
	// job's own work dir inside it stays visible), and the database's
	// socket directories.
	Hide []string `json:"hide,omitempty"`
	// DBOutageGrace is the worker's dbOutageGrace: the run sets its
	// sessions-postgres rows' outageGrace to it (0: leaves them alone).
	DBOutageGrace time.Duration `json:"dbOutageGrace,omitempty"`
	// Writable are writable roots the run adds to its sandbox policy: a
	// worktree job's worktree and the parts of the repository's git
	// directory that committing there writes (worktrees.Worktree.Writable).
	Writable []string `json:"writable,omitempty"`
}

// Output is what a completed job records (River's job output).
type Output struct {
	SessionID string `json:"sessionId"`
	Reason    string `json:"reason"`
	Steps     int    `json:"steps"`
	Text      string `json:"text"`
	// Resumed: the run continued a session an earlier attempt stored.
	Resumed bool `json:"resumed,omitempty"`
	// Worktree is a worktree job's worktree at the end: its branch,
	// commits and changed files, and whether it was removed.
	Worktree *WorktreeOutput `json:"worktree,omitempty"`
}

// WorktreeOutput is what a worktree job's worktree holds when the job
// completes.
type WorktreeOutput struct {
	// Name and Branch (harness/NAME) name it; Dir is where it was.
	Name   string `json:"name"`
	Branch string `json:"branch"`
	Dir    string `json:"dir"`
	// Commits are the branch's commits since its base, newest first
	// ("HASH SUBJECT"); Changed the files it changes.
	Commits []string `json:"commits,omitempty"`
	Changed []string `json:"changed,omitempty"`
	// Removed: the worktree was clean and is gone (its branch stays when
	// it has commits). Kept says why not, when it was not.
	Removed bool   `json:"removed"`
	Kept    string `json:"kept,omitempty"`
}

// Exit codes of a run process besides the CLI's 0, 1, 2 and 130.
const (
	// ExitSessionBusy: the job's session is open in another live process
	// (an earlier attempt still running): the job is snoozed.
	ExitSessionBusy = 75
)

// runWorker works harness_run jobs.
type runWorker struct {
	river.WorkerDefaults[RunArgs]
	s    *Service
	opts WorkOptions
}

// Work runs one attempt of a job (see the package doc for the outcomes).
func (w *runWorker) Work(ctx context.Context, job *river.Job[RunArgs]) (err error) {
	s, sid := w.s, SessionID(job.JobRow)
	ctx, span := s.jobSpan(ctx, job.JobRow, sid)
	defer func() { endJobSpan(span, err) }()
	defer func() { s.cleanWorkDir(ctx, job, err) }()
	resume, done, err := s.sessionState(ctx, sid)
	if err != nil && s.awaitDB(ctx, job.ID) {
		resume, done, err = s.sessionState(ctx, sid) // the database was away
	}
	if err != nil {
		return err
	}
	// River's completer gives up after about 7 s of database errors
	// (leaving the job running until a rescue): the result waits for the
	// database first.
	defer s.awaitDB(ctx, job.ID)
	if done != nil {
		done.Resumed = true
		return river.RecordOutput(ctx, done)
	}
	dir, err := s.workDir(ctx, job.JobRow, job.Args)
	if err != nil {
		return err
	}
	spec := RunSpec{JobID: job.ID, Attempt: job.Attempt, SessionID: sid, Prompt: job.Args.Prompt,
		Model: job.Args.Model, MaxSteps: job.Args.MaxSteps, Resume: resume,
		Budget: agent.Budget{MaxCostUSD: job.Args.MaxCostUSD, MaxTokens: job.Args.MaxTokens}, Hide: s.hidden(), DBOutageGrace: s.cfg.DBOutageGrace}
	var wt *worktrees.Worktree
	if job.Args.Worktree != "" {
		if wt, err = s.jobWorktree(ctx, job.JobRow, job.Args); err != nil {
			return err
		}
		dir, spec.Writable = wt.Dir, wt.Writable()
	}
	out, err := w.run(ctx, job, dir, spec)
	if err != nil {
		return err
	}
	out.Resumed = resume
	if wt != nil {
		out.Worktree = s.finishWorktree(ctx, job.ID, wt)
	}
	return river.RecordOutput(ctx, out)
}

// cleanWorkDir removes the job's work dir (never a Dir job's directory)
// when the attempt that ended with err leaves the job in a terminal state:
// completed (kept with KeepWorkDirs), cancelled (by the outcome, or by
// `jobs cancel` while it ran) or discarded (an error on its last attempt)
// (both kept with KeepFailed or KeepWorkDirs). A retried or snoozed job
// keeps its dir for the next attempt.
func (s *Service) cleanWorkDir(ctx context.Context, job *river.Job[RunArgs], err error) {
	if job.Args.Dir != "" {
		return
	}
	var cancel *river.JobCancelError
	var snooze *river.JobSnoozeError
	failed := errors.As(err, &cancel) || errors.Is(context.Cause(ctx), river.ErrJobCancelledRemotely) ||
		err != nil && !errors.As(err, &snooze) && job.Attempt >= job.MaxAttempts
	switch {
	case err == nil && s.cfg.KeepWorkDirs, failed && (s.cfg.KeepFailed || s.cfg.KeepWorkDirs), err != nil && !failed:
		return
	}
	if rerr := os.RemoveAll(filepath.Join(s.cfg.WorkRoot, SessionID(job.JobRow))); rerr != nil {
		s.log.Warn("worker: removing work dir", "job", job.ID, "err", rerr)
	}
}

// sessionState reads the job's session: none (a new run), cut short or
// failed (resume), or finished (done: its output). Finished means the
// agent's verdict an attempt stored (state [VerdictKey]) is a final
// answer; the log's last message decides nothing (a failed model call
// leaves an assistant note there too).
func (s *Service) sessionState(ctx context.Context, sid string) (resume bool, done *Output, err error) {
	stored, err := s.sessions.Read(ctx, sid)
	if errors.Is(err, sessions.ErrNotFound) {
		return false, nil, nil
	}
	if err != nil {
		return false, nil, fmt.Errorf("session %s: %w", sid, err)
	}
	recs, err := agent.DecodeRecords(stored)
	if err != nil {
		return false, nil, river.JobCancel(fmt.Errorf("session %s: %w", sid, err))
	}
	if v := lastVerdict(recs); v != nil && v.Final() {
		return false, &Output{SessionID: sid, Reason: v.Reason, Steps: v.Steps, Text: clipText(v.Text)}, nil
	}
	return true, nil, nil
}

// VerdictKey is the session state under which a job's run stores the
// agent's verdict on its turn (a [Verdict], JSON) when the turn ends,
// whatever the end.
const VerdictKey = "job/verdict"

// Verdict is the agent's result of one attempt's turn, as the run stores
// it in the session (state VerdictKey) and prints it on stdout.
type Verdict struct {
	agent.Result
	// Attempt is the job attempt that ran the turn.
	Attempt int `json:"attempt"`
}

// Final reports whether the turn ended with a final answer: the model
// stopped (or a tool concluded the turn, or the answer hit the output
// token limit) without a failure. Only such a turn completes a job.
func (v *Verdict) Final() bool {
	switch v.Reason {
	case "stop", "concluded", "length":
		return !v.IsError
	}
	return false
}

// lastVerdict is the last verdict stored in recs, or nil.
func lastVerdict(recs []agent.Record) *Verdict {
	for i := len(recs) - 1; i >= 0; i-- {
		if r := recs[i]; r.Type == agent.RecordState && r.Key == VerdictKey {
			var v Verdict
			if json.Unmarshal(r.State, &v) == nil {
				return &v
			}
		}
	}
	return nil
}

// Retried reports whether an attempt that failed with the model error
// code (and HTTP status) is worth another attempt: network, server and
// overload (rate limit) failures, a malformed stream and a failure with no
// class (a tool or session failure) are; authentication, billing, a
// rejected (invalid) request, a request over the context window and a
// configuration error are not.
func Retried(code llm.Code, status int) bool {
	switch code {
	case llm.CodeNetwork, llm.CodeServer, llm.CodeRateLimit, llm.CodeAborted, "":
		return true
	case llm.CodeProtocol:
		return status == 0 // a malformed stream; a 4xx is an invalid request
	}
	return false
}

func clipText(s string) string {
	const max = 4096
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// run starts the job's run process and maps its outcome.
func (w *runWorker) run(ctx context.Context, job *river.Job[RunArgs], dir string, spec RunSpec) (*Output, error) {
	s := w.s
	in, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	argv := append([]string(nil), w.opts.Command...)
	if job.Args.Patch != "" {
		pf, err := s.writePatch(job.JobRow, job.Args.Patch)
		if err != nil {
			return nil, err
		}
		defer os.Remove(pf)
		argv = append(argv, "--patch", pf)
	}
	env := runEnv(ctx, job.JobRow, spec.SessionID, os.Environ())
	for k, v := range w.opts.Env {
		env[k] = v
	}
	for _, k := range s.cfg.PassEnv {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	res, err := s.sp.Run(subprocess.Spec{
		Context: ctx, Argv: argv, Dir: dir, Env: env, Control: true,
		Stdin: subprocess.DataStdin(in), Stdout: subprocess.Collect(1 << 20), Stderr: subprocess.Collect(64 << 10),
		Grace: s.cfg.Grace,
	})
	if err != nil {
		return nil, fmt.Errorf("job %d: starting the run: %w", job.ID, err)
	}
	out, err := outcome(ctx, job.ID, res)
	if code := res.Outcome.ExitCode; code != nil && *code == ExitSessionBusy && ctx.Err() == nil {
		s.log.Warn("worker: the job's session is open in another process; job snoozed", "job", job.ID, "run", tail(res.Stderr.Text()))
	}
	return out, err
}

// outcome maps a run process's end to the job's result, from the agent's
// verdict the run printed (its exit status only says "busy", "usage
// error" or, without a verdict, that it died): a final answer completes
// the job; max steps and a budget stop cancel it; a failed model call is an errored
// attempt, retried or not by its class ([Retried]); an aborted turn, a
// run that died and an attempt stopped by jobTimeout are retried.
func outcome(ctx context.Context, id int64, res subprocess.Result) (*Output, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("job %d: run stopped (%s): %w", id, res.Outcome, context.Cause(ctx))
	}
	var v Verdict
	_ = json.Unmarshal([]byte(strings.TrimSpace(res.Stdout.Text())), &v)
	errTail := tail(res.Stderr.Text())
	code := -1
	if res.Outcome.ExitCode != nil {
		code = *res.Outcome.ExitCode
	}
	switch {
	case code == ExitSessionBusy:
		return nil, river.JobSnooze(10 * time.Second)
	case code == 0 && v.Final():
		return &Output{SessionID: v.SessionID, Reason: v.Reason, Steps: v.Steps, Text: clipText(v.Text)}, nil
	case v.Reason == "max_steps":
		return nil, river.JobCancel(fmt.Errorf("job %d: max_steps after %d steps, not retried: %s", id, v.Steps, v.Error))
	case v.Reason == "plan":
		// Plan mode: the turn ended on a plan no one can approve in a job.
		// Running it again would plan again: not retried.
		return nil, river.JobCancel(fmt.Errorf("job %d: ended on a plan awaiting approval (permission mode plan), not retried: %s", id, clipText(v.Text)))
	case v.Reason == "budget":
		return nil, river.JobCancel(fmt.Errorf("job %d: budget after %d steps, not retried: %s", id, v.Steps, v.Error))
	case v.Reason == "error" && v.Code != "":
		if !Retried(llm.Code(v.Code), v.Status) {
			return nil, river.JobCancel(fmt.Errorf("job %d: error %s: the model call failed, not retried: %s", id, v.Code, v.Error))
		}
		return nil, fmt.Errorf("job %d: error %s: the model call failed: %s", id, v.Code, v.Error)
	case code == 2:
		return nil, river.JobCancel(fmt.Errorf("job %d: run failed (%s), not retried: %s", id, res.Outcome, errTail))
	case v.Reason == "error" || v.Reason == "aborted":
		return nil, fmt.Errorf("job %d: %s: %s", id, v.Reason, v.Error)
	case v.Reason != "":
		return nil, fmt.Errorf("job %d: %s (%s) without a final answer: %s", id, v.Reason, res.Outcome, errTail)
	default:
		return nil, fmt.Errorf("job %d: run failed (%s): %s", id, res.Outcome, errTail)
	}
}

// tail is the last line-ish part of a run's stderr for an error message.
func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	if s == "" {
		return "(no output on stderr)"
	}
	return s
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/spf13/cobra"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/plugins/worker"
	"github.com/dshgo/harness/services/sessions/postgres"
)

// The fleet commands (submit, worker, jobs, job-run) are thin: the
// worker plugin (plugins/worker) does the work; docs/fleet.md is the guide.

// withWorker boots the configured harness, runs fn with its worker
// service and stops the harness.
// A database that does not accept a connection fails it at once (exit 1,
// "PostgreSQL is unreachable at HOST:PORT: WHY").
func withWorker(env *Env, fn func(ctx context.Context, h *fxcore.Harness, w *worker.Service) error) error {
	dsns, err := fleetDSNs(env)
	if err != nil {
		return err
	}
	for _, d := range dsns {
		if err := worker.Ping(env.Ctx, d); err != nil {
			return Failure(err)
		}
	}
	h, err := env.Boot(SkipAudit())
	if err != nil {
		return err
	}
	defer func() { _ = stopHarness(h) }() // stopping logs its own problems
	w, ok := core.Lookup(h.Root.Context(), worker.Key)
	if !ok {
		return UsageError(errors.New("the worker plugin is not active: add rows `name: sessions-postgres` and `name: worker` " +
			"(both with dsn: !env VAR) to harness.yml (docs/fleet.md); `harness plugins` shows what it waits for"))
	}
	return fn(env.Ctx, h, w)
}

// fleetDSNs returns the DSNs of the manifest's enabled worker and
// sessions-postgres rows. A row whose config does not decode is left out:
// booting reports it.
func fleetDSNs(env *Env) ([]string, error) {
	m, err := env.LoadManifest()
	if err != nil {
		return nil, err
	}
	var dsns []string
	var walk func([]manifest.Entry)
	walk = func(rows []manifest.Entry) {
		for _, e := range rows {
			switch {
			case e.Disabled:
			case e.Group:
				walk(e.Children)
			case e.Name == worker.Plugin.Name():
				if cfg, err := manifest.DecodeConfig(worker.Plugin, e, env.LookupEnv); err == nil {
					dsns = append(dsns, cfg.(*worker.Config).DSN)
				}
			case e.Name == postgres.Plugin.Name():
				if cfg, err := manifest.DecodeConfig(postgres.Plugin, e, env.LookupEnv); err == nil {
					dsns = append(dsns, cfg.(*postgres.Config).DSN)
				}
			}
		}
	}
	walk(m.Plugins)
	return dsns, nil
}

// waitForDatabase waits, with worker.WaitForDatabase's backoff, until the
// manifest's fleet databases accept a connection, printing "waiting for
// PostgreSQL (try N, next in D): WHY" on stderr before each wait. A
// signal (env.Ctx done) ends the wait: interrupted.
func waitForDatabase(env *Env) error {
	dsns, err := fleetDSNs(env)
	if err != nil {
		return err
	}
	err = worker.WaitForDatabase(env.Ctx, dsns, func(try int, next time.Duration, err error) {
		fmt.Fprintf(env.Stderr, "harness worker: waiting for PostgreSQL (try %d, next in %s): %v\n", try, next, err)
	})
	if env.Ctx.Err() != nil {
		return errInterrupted()
	}
	if err != nil {
		return UsageError(err)
	}
	return nil
}

func workerCommand(env *Env) *cobra.Command {
	var (
		concurrency int
		queues      []string
	)
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run submitted jobs (agent runs) from the PostgreSQL queue until SIGTERM",
		Long: "worker fetches harness_run jobs from the queue of the manifest's worker row and runs each in its own\n" +
			"work dir (a fresh directory or a git clone) as a `harness job-run` process with this manifest, the job's\n" +
			"patch, and the sandbox of the subprocess row; sessions are stored through sessions-postgres.\n" +
			"--concurrency runs N jobs of each queue at once; --queues names the queues (default: default).\n\n" +
			"SIGTERM or Ctrl-C drains: no new jobs; running ones may finish for the worker row's drainTimeout, then\n" +
			"they are stopped and handed back to the queue (resumed by a worker from their stored session).\n" +
			"A database that does not accept connections at start is waited for (backoff 1s doubling to 30s), one\n" +
			"line per try on stderr: waiting for PostgreSQL (try N, next in D): WHY.\n" +
			"Exit status: 0 after a drain; 2 configuration error; 130 interrupted while waiting for the database.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			argv, err := jobRunArgv(env)
			if err != nil {
				return err
			}
			m, err := env.LoadManifest()
			if err != nil {
				return err
			}
			pass := map[string]string{}
			for _, name := range m.CredentialEnv() {
				if v, ok := env.LookupEnv(name); ok {
					pass[name] = v
				}
			}
			for _, q := range queues {
				if err := worker.ValidQueue(q); err != nil {
					return UsageError(fmt.Errorf("--queues: %w", err))
				}
			}
			if concurrency < 0 || concurrency > river.QueueNumWorkersMax {
				return UsageError(fmt.Errorf("--concurrency %d: want 1 to %d", concurrency, river.QueueNumWorkersMax)) // 0 is 1
			}
			if err := waitForDatabase(env); err != nil {
				return err
			}
			return withWorker(env, func(ctx context.Context, _ *fxcore.Harness, w *worker.Service) error {
				err := w.Work(ctx, worker.WorkOptions{Command: argv, Env: pass, Queues: queues, Concurrency: concurrency,
					Started: func(id string) {
						fmt.Fprintf(env.Stderr, "harness worker %s: working queues %s (concurrency %d), pid %d\n",
							id, strings.Join(cmp(queues, []string{"default"}), ","), max(concurrency, 1), os.Getpid())
					}})
				if err != nil {
					return Failure(err)
				}
				fmt.Fprintln(env.Stderr, "harness worker: drained, stopping")
				return nil
			})
		},
	}
	cmd.Flags().IntVar(&concurrency, "concurrency", 1, "jobs of each queue run at once")
	cmd.Flags().StringSliceVar(&queues, "queues", nil, "queues to work, comma-separated (default: default)")
	return signalStops(cmd)
}

func cmp[T any](a, b []T) []T {
	if len(a) > 0 {
		return a
	}
	return b
}

// jobRunArgv is the command a worker runs each job with: this binary,
// the worker's manifest and patches (absolute), and job-run. The manifest
// must be a file: a job's work dir must not pick its own harness.yml.
func jobRunArgv(env *Env) ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, Failure(fmt.Errorf("finding the harness binary: %w", err))
	}
	path := env.ManifestPath()
	if path == "" {
		return nil, UsageError(errors.New("harness worker needs a manifest file with a worker row (--config FILE or $HARNESS_CONFIG; docs/fleet.md)"))
	}
	abs := func(p string) string {
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	argv := []string{exe, "--config", abs(path), "--log-level", env.LogLevel, "--no-claude-settings"}
	for _, p := range env.Patches {
		argv = append(argv, "--patch", abs(p))
	}
	return append(argv, "job-run"), nil
}

func submitCommand(env *Env) *cobra.Command {
	var (
		sub       worker.Submission
		patchFile string
		file      string
		asJSON    bool
	)
	cmd := &cobra.Command{
		Use:   "submit [flags] PROMPT | submit --file FILE",
		Short: "Enqueue an agent run as a job for `harness worker`; print its id",
		Long: "submit enqueues one agent turn (PROMPT, or `-` for stdin) as a harness_run job in the queue of the\n" +
			"manifest's worker row and prints the job id. The run works in a fresh empty work dir, a clone of\n" +
			"--repo (a git URL or path; --ref a branch, tag or commit), or in place in --dir (an absolute path that\n" +
			"exists on the workers); with --worktree NAME (or auto: job-ID) it works instead in a git worktree of\n" +
			"--dir's repository on branch harness/NAME, made under the worker's work root and removed when the job\n" +
			"completes clean (its branch stays). --job-patch FILE is a manifest patch layer for this run. --unique (with --key K,\n" +
			"only K counts) enqueues nothing while an equal job exists and prints that job's id instead.\n" +
			"--file FILE (JSON Lines: one object per line with \"prompt\" and optionally repo, ref, dir, worktree, model, maxSteps, maxCostUsd, maxTokens,\n" +
			"key, tag, tags, priority, queue) enqueues every line in one transaction and prints one id per line; the\n" +
			"flags are the defaults of every line; a bad line is reported as FILE:LINE and nothing is enqueued.\n" +
			"Follow it with `harness jobs logs ID`. Under TRACEPARENT (a CI step's trace) the job stores that trace\n" +
			"context and its worker's spans join it (docs/tracing.md).",
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if patchFile != "" {
				b, err := os.ReadFile(patchFile)
				if err != nil {
					return UsageError(fmt.Errorf("--job-patch: %w", err))
				}
				sub.Args.Patch = string(b)
			}
			var err error
			if sub.Args.Dir != "" {
				if sub.Args.Dir, err = filepath.Abs(sub.Args.Dir); err != nil {
					return UsageError(err)
				}
			}
			if sub.Args.Repo != "" && !strings.Contains(sub.Args.Repo, "://") && !strings.Contains(sub.Args.Repo, "@") {
				if fi, err := os.Stat(sub.Args.Repo); err == nil && fi.IsDir() {
					sub.Args.Repo, _ = filepath.Abs(sub.Args.Repo)
				}
			}
			if file != "" {
				if len(args) > 0 {
					return UsageError(errors.New("submit --file takes no PROMPT argument"))
				}
				return submitFile(env, file, sub, asJSON)
			}
			if sub.Args.Prompt, err = readPrompt(env.Stdin, args); err != nil {
				return UsageError(err)
			}
			if err := sub.Validate(); err != nil {
				return UsageError(err)
			}
			return withWorker(env, func(ctx context.Context, _ *fxcore.Harness, w *worker.Service) error {
				res, err := w.Submit(ctx, sub)
				if err != nil {
					if errors.Is(err, context.Canceled) {
						return Failure(err)
					}
					return UsageError(err)
				}
				if res.Duplicate {
					fmt.Fprintf(env.Stderr, "harness: job %d already exists (%s): nothing enqueued\n", res.Job.ID, res.Job.State)
				}
				if asJSON {
					return writeJSON(env.Stdout, jobView(res.Job))
				}
				fmt.Fprintln(env.Stdout, res.Job.ID)
				return nil
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&sub.Args.Repo, "repo", "", "git URL or repository path cloned into the job's work dir")
	fl.StringVar(&sub.Args.Ref, "ref", "", "branch, tag or commit of --repo to check out")
	fl.StringVar(&sub.Args.Dir, "dir", "", "work in place in this directory (must exist on the workers)")
	fl.StringVar(&sub.Args.Worktree, "worktree", "", "with --dir: work in a git worktree of its repository (branch harness/`NAME`; auto: job-ID)")
	fl.StringVar(&patchFile, "job-patch", "", "manifest patch `FILE` applied for this run")
	fl.StringVarP(&sub.Args.Model, "model", "m", "", "model route provider/model (default: the agent row's)")
	fl.IntVar(&sub.Args.MaxSteps, "max-steps", 0, "maximum model calls (default: the agent row's maxSteps)")
	fl.Float64Var(&sub.Args.MaxCostUSD, "max-cost", 0, "the job session's cost cap in `USD` (default: the agent row's budget; needs the route's prices)")
	fl.Int64Var(&sub.Args.MaxTokens, "max-tokens", 0, "the job session's token cap `N` (default: the agent row's budget)")
	fl.IntVar(&sub.Priority, "priority", 1, "1 (first) to 4")
	fl.StringArrayVar(&sub.Tags, "tag", nil, "label for `harness jobs --tag` (repeatable)")
	fl.StringVar(&sub.Queue, "queue", "", "queue (default: default)")
	fl.BoolVar(&sub.Unique, "unique", false, "enqueue nothing while an equal job exists")
	fl.StringVar(&sub.Args.Key, "key", "", "with --unique: the key that makes jobs equal")
	fl.BoolVar(&asJSON, "json", false, "print the job as JSON")
	fl.StringVar(&file, "file", "", "enqueue every line of this JSON Lines `FILE` (one transaction)")
	return cmd
}

// stateList reads --state values.
func stateList(in []string) ([]string, error) {
	known := []string{"available", "cancelled", "completed", "discarded", "pending", "retryable", "running", "scheduled"}
	for _, s := range in {
		if !slices.Contains(known, s) {
			return nil, fmt.Errorf("--state %q: want one of %s", s, strings.Join(known, ", "))
		}
	}
	return in, nil
}

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/riverqueue/river/rivertype"
	"github.com/spf13/cobra"

	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/plugins/worker"
	"github.com/dshgo/harness/services/sessions"
)

// jobJSON is a job as `jobs --json` and `jobs show --json` print it.
type jobJSON struct {
	ID          int64          `json:"id"`
	State       string         `json:"state"`
	Queue       string         `json:"queue"`
	Priority    int            `json:"priority"`
	Tags        []string       `json:"tags"`
	Attempt     int            `json:"attempt"`
	MaxAttempts int            `json:"maxAttempts"`
	AttemptedBy []string       `json:"attemptedBy,omitempty"`
	Created     time.Time      `json:"created"`
	Attempted   *time.Time     `json:"attempted,omitempty"`
	Finalized   *time.Time     `json:"finalized,omitempty"`
	SessionID   string         `json:"sessionId"`
	Args        worker.RunArgs `json:"args"`
	Output      *worker.Output `json:"output,omitempty"`
	Errors      []jobErrorJSON `json:"errors,omitempty"`
	// WorkerGone: the job is running on a worker that sent no heartbeat
	// for the worker row's heartbeatTimeout; the next worker that looks
	// hands it back to the queue.
	WorkerGone bool `json:"workerGone,omitempty"`
	// Trace is the trace context the job was submitted under (see
	// worker.SubmitterTrace); absent when there was none.
	Trace *jobTraceJSON `json:"trace,omitempty"`
}

// jobTraceJSON names the submitter's span: the job's spans are in trace
// TraceID, below span SpanID.
type jobTraceJSON struct {
	TraceID string `json:"traceId"`
	SpanID  string `json:"spanId"`
}

type jobErrorJSON struct {
	At      time.Time `json:"at"`
	Attempt int       `json:"attempt"`
	Error   string    `json:"error"`
}

func jobView(j *rivertype.JobRow) jobJSON {
	v := jobJSON{ID: j.ID, State: string(j.State), Queue: j.Queue, Priority: j.Priority, Tags: j.Tags,
		Attempt: j.Attempt, MaxAttempts: j.MaxAttempts, AttemptedBy: j.AttemptedBy, Created: j.CreatedAt,
		Attempted: j.AttemptedAt, Finalized: j.FinalizedAt, SessionID: worker.SessionID(j)}
	if v.Tags == nil {
		v.Tags = []string{}
	}
	_ = json.Unmarshal(j.EncodedArgs, &v.Args)
	if out := j.Output(); len(out) > 0 {
		var o worker.Output
		if json.Unmarshal(out, &o) == nil {
			v.Output = &o
		}
	}
	for _, e := range j.Errors {
		v.Errors = append(v.Errors, jobErrorJSON{At: e.At, Attempt: e.Attempt, Error: e.Error})
	}
	if sc := worker.SubmitterTrace(j); sc.IsValid() {
		v.Trace = &jobTraceJSON{TraceID: sc.TraceID().String(), SpanID: sc.SpanID().String()}
	}
	return v
}

func jobsCommand(env *Env) *cobra.Command {
	var (
		q      worker.ListQuery
		states []string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "jobs",
		Short: "List submitted jobs, newest first; show, cancel or follow one",
		Long: "jobs lists the harness_run jobs of the manifest's worker row: id, state, attempt, queue, tags, age and\n" +
			"prompt. --state (repeatable) and --tag (repeatable, all must match) filter; --limit N (default 50).\n" +
			"--json prints an array of {id, state, queue, priority, tags, attempt, maxAttempts, attemptedBy, created,\n" +
			"attempted, finalized, sessionId, args, output, errors, workerGone}. A running job whose worker sent no\n" +
			"heartbeat for the worker row's heartbeatTimeout shows as: running (worker gone, retrying).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := stateList(states)
			if err != nil {
				return UsageError(err)
			}
			for _, s := range st {
				q.States = append(q.States, rivertype.JobState(s))
			}
			return withWorker(env, func(ctx context.Context, _ *fxcore.Harness, w *worker.Service) error {
				jobs, err := w.List(ctx, q)
				if err != nil {
					return Failure(err)
				}
				gone, err := goneWorkers(ctx, w, jobs...)
				if err != nil {
					return Failure(err)
				}
				views := []jobJSON{}
				for _, j := range jobs {
					v := jobView(j)
					v.WorkerGone = worker.HeldByGoneWorker(j, gone)
					views = append(views, v)
				}
				if asJSON {
					return writeJSON(env.Stdout, views)
				}
				tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tSTATE\tATTEMPT\tQUEUE\tTAGS\tCREATED\tPROMPT")
				for _, v := range views {
					fmt.Fprintf(tw, "%d\t%s\t%d/%d\t%s\t%s\t%s\t%s\n", v.ID, stateText(v), v.Attempt, v.MaxAttempts, v.Queue,
						strings.Join(v.Tags, ","), v.Created.Local().Format("2006-01-02 15:04:05"), clip(oneLine(v.Args.Prompt), 60))
				}
				return tw.Flush()
			})
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&states, "state", nil, "only jobs in this state (repeatable)")
	fl.StringArrayVar(&q.Tags, "tag", nil, "only jobs with this tag (repeatable: all of them)")
	fl.StringVar(&q.Queue, "queue", "", "only jobs of this queue")
	fl.IntVar(&q.Limit, "limit", 50, "at most N jobs")
	fl.BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(jobsShow(env), jobsCancel(env), jobsLogs(env))
	return cmd
}

func jobID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 {
		return 0, UsageError(fmt.Errorf("job id %q: want a positive number (see harness jobs)", s))
	}
	return id, nil
}

func jobError(err error) error {
	if errors.Is(err, worker.ErrJobNotFound) {
		return UsageError(err)
	}
	return Failure(err)
}

// withJob boots the manifest's worker row and calls fn with the job whose
// id is arg: a malformed or unknown id is a usage error.
func withJob(env *Env, arg string, fn func(ctx context.Context, w *worker.Service, j *rivertype.JobRow) error) error {
	id, err := jobID(arg)
	if err != nil {
		return err
	}
	return withWorker(env, func(ctx context.Context, _ *fxcore.Harness, w *worker.Service) error {
		j, err := w.Get(ctx, id)
		if err != nil {
			return jobError(err)
		}
		return fn(ctx, w, j)
	})
}

func jobsShow(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Print a job: state, attempts, arguments, errors and output",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withJob(env, args[0], func(ctx context.Context, w *worker.Service, j *rivertype.JobRow) error {
				gone, err := goneWorkers(ctx, w, j)
				if err != nil {
					return Failure(err)
				}
				v := jobView(j)
				v.WorkerGone = worker.HeldByGoneWorker(j, gone)
				if asJSON {
					return writeJSON(env.Stdout, v)
				}
				printJob(env.Stdout, v)
				return nil
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// goneWorkers asks which of the workers running jobs are taken for gone.
func goneWorkers(ctx context.Context, w *worker.Service, jobs ...*rivertype.JobRow) (map[string]bool, error) {
	var ids []string
	for _, j := range jobs {
		if j.State == rivertype.JobStateRunning && len(j.AttemptedBy) > 0 {
			ids = append(ids, j.AttemptedBy[len(j.AttemptedBy)-1])
		}
	}
	return w.GoneWorkers(ctx, ids)
}

// stateText is v's state as the tables print it.
func stateText(v jobJSON) string {
	if v.WorkerGone {
		return v.State + " (worker gone, retrying)"
	}
	return v.State
}

// printJob writes v as `jobs show` prints it.
func printJob(out io.Writer, v jobJSON) {
	fmt.Fprintf(out, "job %d  %s  attempt %d/%d  queue %s  priority %d  tags %s\n", v.ID, stateText(v), v.Attempt, v.MaxAttempts, v.Queue, v.Priority, strings.Join(v.Tags, ","))
	fmt.Fprintf(out, "session %s (harness jobs logs %d)\n", v.SessionID, v.ID)
	fmt.Fprintf(out, "created %s", v.Created.Local().Format(time.RFC3339))
	if v.Finalized != nil {
		fmt.Fprintf(out, ", finished %s", v.Finalized.Local().Format(time.RFC3339))
	}
	if len(v.AttemptedBy) > 0 {
		fmt.Fprintf(out, ", worked by %s", strings.Join(v.AttemptedBy, ", "))
	}
	fmt.Fprintln(out)
	if v.Trace != nil {
		fmt.Fprintf(out, "trace %s (submitted under span %s)\n", v.Trace.TraceID, v.Trace.SpanID)
	}
	fmt.Fprintf(out, "prompt: %s\n", v.Args.Prompt)
	for _, e := range v.Errors {
		fmt.Fprintf(out, "error (attempt %d, %s): %s\n", e.Attempt, e.At.Local().Format(time.RFC3339), e.Error)
	}
	if v.Output != nil {
		fmt.Fprintf(out, "result (%s, %d steps): %s\n", v.Output.Reason, v.Output.Steps, v.Output.Text)
	}
}

func jobsCancel(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "cancel ID...",
		Short: "Cancel jobs: pending ones never run, running ones are stopped (their tools terminated)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var ids []int64
			for _, a := range args {
				id, err := jobID(a)
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			return withWorker(env, func(ctx context.Context, _ *fxcore.Harness, w *worker.Service) error {
				for _, id := range ids {
					j, err := w.Cancel(ctx, id)
					if err != nil {
						return jobError(err)
					}
					fmt.Fprintf(env.Stdout, "job %d: %s\n", id, j.State)
				}
				return nil
			})
		},
	}
}

// finalState reports whether a job will not run again.
func finalState(s rivertype.JobState) bool {
	return s == rivertype.JobStateCompleted || s == rivertype.JobStateCancelled || s == rivertype.JobStateDiscarded
}

func jobsLogs(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "logs ID",
		Short: "Follow a job's session live until the job finishes (or Ctrl-C)",
		Long: "logs prints the job's session like `harness sessions show`, then every record as a worker stores it,\n" +
			"and returns when the job is completed, cancelled or discarded. A job that has not started yet is\n" +
			"waited for. --json prints one stored record per line.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withJob(env, args[0], func(ctx context.Context, w *worker.Service, j *rivertype.JobRow) error {
				return followJob(ctx, env, w, j, asJSON)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print stored records as JSON lines")
	return cmd
}

// followJob follows j's session until j is final (polling its state each
// 500 ms) and the records it stored are printed.
func followJob(ctx context.Context, env *Env, w *worker.Service, j *rivertype.JobRow, asJSON bool) error {
	store, sid := w.Sessions(), worker.SessionID(j)
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	var last int64
	print := func(r sessions.Record) error {
		last = r.Seq
		if asJSON {
			_, err := fmt.Fprintf(env.Stdout, "%s\n", r.Data)
			return err
		}
		return writeRecord(env.Stdout, r)
	}
	done := make(chan error, 1)
	started := false
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		if !started {
			if _, err := store.Read(ctx, sid); err == nil {
				started = true
				go func() { done <- store.Follow(fctx, sid, 0, print) }()
			}
		}
		select {
		case <-ctx.Done():
			stop()
			if started {
				<-done
			}
			return nil
		case err := <-done:
			if ctx.Err() == nil && err != nil {
				return storeError(err)
			}
			return nil
		case <-tick.C:
		}
		cur, err := w.Get(ctx, j.ID)
		if err != nil {
			return jobError(err)
		}
		if finalState(cur.State) {
			if started {
				stop()
				<-done // Follow returned: last is ours again
			}
			// What was stored before the job ended and not yet printed.
			rest, err := store.Read(ctx, sid)
			if err != nil && !errors.Is(err, sessions.ErrNotFound) {
				return storeError(err)
			}
			for _, r := range rest {
				if r.Seq > last {
					if err := print(r); err != nil {
						return Failure(err)
					}
				}
			}
			fmt.Fprintf(env.Stderr, "job %d %s\n", j.ID, cur.State)
			return nil
		}
	}
}

package worker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
)

type pgx5Tx = pgx.Tx

// migrate creates the schema and applies River's migrations (each in a
// transaction of its own: some cannot share one) while holding an
// advisory lock, so that workers starting together do not race.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Schema: schema})
	if err != nil {
		return fmt.Errorf("worker: migrations: %w", err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("worker: connecting: %w", err)
	}
	defer conn.Release()
	key := "harness worker migrate " + schema
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtext($1))`, key); err != nil {
		return fmt.Errorf("worker: migration lock: %w", err)
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtext($1))`, key) }()
	if _, err := conn.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{schema}.Sanitize()); err != nil {
		return fmt.Errorf("worker: schema %s: %w", schema, err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("worker: migrating schema %s: %w", schema, err)
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf(workerTable, pgx.Identifier{schema}.Sanitize())); err != nil {
		return fmt.Errorf("worker: liveness table in schema %s: %w", schema, err)
	}
	return nil
}

// riverConfig is the client configuration; queues nil makes an
// insert-only client.
func (s *Service) riverConfig(queues map[string]river.QueueConfig) *river.Config {
	workers := river.NewWorkers()
	river.AddWorker(workers, &runWorker{s: s})
	return &river.Config{
		Schema:               s.cfg.Schema,
		Logger:               s.log,
		MaxAttempts:          s.cfg.MaxAttempts,
		JobTimeout:           s.cfg.JobTimeout,
		RescueStuckJobsAfter: s.cfg.RescueAfter,
		FetchPollInterval:    s.cfg.FetchPollInterval,
		FetchCooldown:        min(river.FetchCooldownDefault, s.cfg.FetchPollInterval),
		SoftStopTimeout:      s.cfg.DrainTimeout,
		Queues:               queues,
		Workers:              workers,
	}
}

// Submission is one run to enqueue.
type Submission struct {
	Args RunArgs
	// Queue is the River queue (default "default").
	Queue string
	// Priority is 1 (first) to 4 (default 1).
	Priority int
	// Tags label the job (letters, digits, '_' and '-'), for listing.
	Tags []string
	// Unique makes the submission a no-op while a job with the same
	// Args.Key (or, without a key, the same arguments) is pending,
	// running or completed: Submit then returns that job.
	Unique bool
}

// Submitted is what Submit enqueued (or found, for a unique duplicate).
type Submitted struct {
	Job *rivertype.JobRow
	// Duplicate: a unique submission matched an existing job, which is
	// returned; nothing was enqueued.
	Duplicate bool
}

// Submit validates sub and enqueues it as a harness_run job. The job
// stores the submitter's W3C trace context in its metadata (keys
// MetaTraceParent, MetaTraceState): that of ctx's span, else the process's
// TRACEPARENT; the span of every attempt of the job is its child, so the
// job joins the submitter's trace. A unique duplicate keeps the stored
// context of the job it matched.
func (s *Service) Submit(ctx context.Context, sub Submission) (Submitted, error) {
	if err := sub.Validate(); err != nil {
		return Submitted{}, err
	}
	c, err := s.ready(ctx)
	if err != nil {
		return Submitted{}, err
	}
	res, err := c.Insert(ctx, sub.Args, s.insertOpts(ctx, sub))
	if err != nil {
		return Submitted{}, fmt.Errorf("submit: %w", err)
	}
	return Submitted{Job: res.Job, Duplicate: res.UniqueSkippedAsDuplicate}, nil
}

// SubmitError is a submission of [Service.SubmitMany] that is not valid.
type SubmitError struct {
	Index int   // its position in the batch, from 0
	Err   error // what is wrong with it
}

// Error names the submission by its position (from 1).
func (e *SubmitError) Error() string { return fmt.Sprintf("submission %d: %v", e.Index+1, e.Err) }

// Unwrap returns the cause.
func (e *SubmitError) Unwrap() error { return e.Err }

// SubmitMany validates every submission, then enqueues them all with one
// River InsertMany (one statement, one transaction), in order: either
// every job is enqueued or none. Invalid submissions are returned as
// *SubmitError values joined with errors.Join, and nothing is enqueued.
// Trace context is stored as Submit does.
func (s *Service) SubmitMany(ctx context.Context, subs []Submission) ([]Submitted, error) {
	var bad []error
	params := make([]river.InsertManyParams, len(subs))
	for i := range subs {
		if err := subs[i].Validate(); err != nil {
			bad = append(bad, &SubmitError{Index: i, Err: err})
			continue
		}
		params[i] = river.InsertManyParams{Args: subs[i].Args, InsertOpts: s.insertOpts(ctx, subs[i])}
	}
	if len(bad) > 0 {
		return nil, errors.Join(bad...)
	}
	if len(subs) == 0 {
		return nil, nil
	}
	c, err := s.ready(ctx)
	if err != nil {
		return nil, err
	}
	res, err := c.InsertMany(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("submit: %w", err)
	}
	out := make([]Submitted, len(res))
	for i, r := range res {
		out[i] = Submitted{Job: r.Job, Duplicate: r.UniqueSkippedAsDuplicate}
	}
	return out, nil
}

// insertOpts are River's options for sub (validated).
func (s *Service) insertOpts(ctx context.Context, sub Submission) *river.InsertOpts {
	opts := &river.InsertOpts{Queue: sub.Queue, Priority: sub.Priority, Tags: sub.Tags, Metadata: s.traceMetadata(ctx)}
	if sub.Unique {
		opts.UniqueOpts = river.UniqueOpts{ByArgs: true}
	}
	return opts
}

// Validate checks sub's arguments, priority (0 becomes 1), tags and
// queue, and says what is wrong in words, before River sees them. Submit
// and SubmitMany call it.
func (sub *Submission) Validate() error {
	if err := sub.Args.validate(); err != nil {
		return err
	}
	if sub.Priority == 0 {
		sub.Priority = 1
	}
	if sub.Priority < 1 || sub.Priority > 4 {
		return fmt.Errorf("priority %d: want 1 (first) to 4", sub.Priority)
	}
	for _, tag := range sub.Tags {
		if err := ValidTag(tag); err != nil {
			return err
		}
	}
	if sub.Queue != "" {
		return ValidQueue(sub.Queue)
	}
	return nil
}

// ValidQueue checks a queue name against River's rule and says what is
// wrong in words: 1 to 64 lower-case letters and digits, with single '-'
// or '_' between them.
func ValidQueue(name string) error {
	const rule = "a queue name is 1 to 64 lower-case letters and digits, with single '-' or '_' between them"
	switch {
	case name == "":
		return fmt.Errorf("queue: empty: %s", rule)
	case len(name) > 64:
		return fmt.Errorf("queue %q…: too long (%d characters): %s", name[:20], len(name), rule)
	case !queueRE().MatchString(name):
		return fmt.Errorf("queue %q: %s", name, rule)
	}
	return nil
}

// River's rules for tags and queue names (river insert_opts.go, client.go),
// compiled on first use.
var (
	tagRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\A[\w][\w\-]+[\w]\z`) })
	queueRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:[a-z0-9])+(?:[_|\-]?[a-z0-9]+)*$`) })
)

// ValidTag checks a job tag against River's rule and says what is wrong
// in words: 3 to 255 characters, letters, digits, '_' and '-', starting
// and ending with a letter, digit or '_'.
func ValidTag(tag string) error {
	const rule = "a tag is 3 to 255 characters: letters, digits, '_' and '-', not starting or ending with '-'"
	switch {
	case len(tag) < 3:
		return fmt.Errorf("tag %q: too short (%d characters): %s", tag, len(tag), rule)
	case len(tag) > 255:
		return fmt.Errorf("tag %q…: too long (%d characters): %s", tag[:20], len(tag), rule)
	case !tagRE().MatchString(tag):
		return fmt.Errorf("tag %q: %s", tag, rule)
	}
	return nil
}

// ListQuery selects jobs for [Service.List].
type ListQuery struct {
	States []rivertype.JobState // empty: every state
	Tags   []string             // jobs having every tag
	Queue  string
	Limit  int // default 50
}

// List returns harness_run jobs, newest first.
func (s *Service) List(ctx context.Context, q ListQuery) ([]*rivertype.JobRow, error) {
	c, err := s.ready(ctx)
	if err != nil {
		return nil, err
	}
	if q.Limit <= 0 {
		q.Limit = 50
	}
	p := river.NewJobListParams().Kinds(RunArgs{}.Kind()).OrderBy(river.JobListOrderByID, river.SortOrderDesc).First(q.Limit)
	if len(q.States) > 0 {
		p = p.States(q.States...)
	} else {
		p = p.States(allStates...)
	}
	if len(q.Tags) > 0 {
		p = p.TagsAll(q.Tags...)
	}
	if q.Queue != "" {
		p = p.Queues(q.Queue)
	}
	res, err := c.JobList(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	return res.Jobs, nil
}

var allStates = []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStateCancelled, rivertype.JobStateCompleted, rivertype.JobStateDiscarded,
	rivertype.JobStatePending, rivertype.JobStateRetryable, rivertype.JobStateRunning, rivertype.JobStateScheduled,
}

// ErrJobNotFound is returned for a job id that is not a harness_run job.
var ErrJobNotFound = errors.New("job not found")

// Get returns the job with id.
func (s *Service) Get(ctx context.Context, id int64) (*rivertype.JobRow, error) {
	c, err := s.ready(ctx)
	if err != nil {
		return nil, err
	}
	j, err := c.JobGet(ctx, id)
	if errors.Is(err, river.ErrNotFound) || err == nil && j.Kind != (RunArgs{}).Kind() {
		return nil, fmt.Errorf("job %d: %w", id, ErrJobNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("job %d: %w", id, err)
	}
	return j, nil
}

// Cancel cancels job id: a job not yet running will not run; a running
// one has its run stopped by its worker (its tools terminated, the
// session keeping what happened) within about a second. Cancelling a
// finished job changes nothing. It returns the job as updated.
func (s *Service) Cancel(ctx context.Context, id int64) (*rivertype.JobRow, error) {
	if _, err := s.Get(ctx, id); err != nil {
		return nil, err
	}
	c, err := s.ready(ctx)
	if err != nil {
		return nil, err
	}
	j, err := c.JobCancel(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("cancel job %d: %w", id, err)
	}
	return j, nil
}

// WorkOptions configure [Service.Work].
type WorkOptions struct {
	// Command is the argv that runs one job: a harness binary with the
	// worker's manifest flags and the job-run command. The job's spec
	// ([RunSpec], JSON) is its stdin; its cwd is the work dir; a job's
	// manifest patch is appended as `--patch FILE`.
	Command []string
	// Env is set in every run's environment on top of the scrubbed one
	// (pass the manifest's credential variables here: the subprocess
	// service removes them otherwise).
	Env map[string]string
	// Queues to work (default ["default"]), each with Concurrency
	// runs at once (default 1).
	Queues      []string
	Concurrency int
	// Started, when set, is called with River's client id once the
	// worker fetches jobs.
	Started func(clientID string)
}

// Work runs jobs until ctx is done, then drains: it fetches nothing new
// and waits up to DrainTimeout for running jobs to finish; the ones still
// running then are stopped (their tools terminated) and handed back to the
// queue as retryable, to resume on a worker. Work returns nil after a
// drain, or the error that kept it from starting.
func (s *Service) Work(ctx context.Context, o WorkOptions) error {
	if len(o.Command) == 0 {
		return errors.New("worker: no command to run jobs with")
	}
	if o.Concurrency == 0 {
		o.Concurrency = 1
	}
	if o.Concurrency < 1 || o.Concurrency > river.QueueNumWorkersMax {
		return fmt.Errorf("worker: concurrency %d: want 1 to %d", o.Concurrency, river.QueueNumWorkersMax)
	}
	if len(o.Queues) == 0 {
		o.Queues = []string{river.QueueDefault}
	}
	if _, err := s.ready(ctx); err != nil {
		return err
	}
	if p := s.sp.SandboxPolicy(); !p.Enabled() {
		s.log.Warn("worker: the subprocess row's sandbox is off: the jobs' commands run unconfined and can read each other's work dirs, the patch files and the database socket")
	}
	queues := map[string]river.QueueConfig{}
	for _, q := range o.Queues {
		queues[q] = river.QueueConfig{MaxWorkers: o.Concurrency}
	}
	cfg := s.riverConfig(queues)
	cfg.Workers = river.NewWorkers()
	river.AddWorker(cfg.Workers, &runWorker{s: s, opts: o})
	c, err := river.NewClient(riverpgxv5.New(s.pool), cfg)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	// The liveness row exists before the first fetch, so that a job this
	// worker takes is never without one.
	host, _ := os.Hostname()
	if err := s.beat(ctx, c.ID(), host, os.Getpid()); err != nil {
		return err
	}
	if err := c.Start(context.WithoutCancel(ctx)); err != nil {
		s.leave(context.WithoutCancel(ctx), c.ID())
		return fmt.Errorf("worker: start: %w", err)
	}
	lctx, stopLiveness := context.WithCancel(context.WithoutCancel(ctx))
	var lwg sync.WaitGroup
	lwg.Go(func() { s.liveness(lctx, c.ID(), host, os.Getpid()) })
	if o.Started != nil {
		o.Started(c.ID())
	}
	<-ctx.Done()
	// Stop escalates by itself after SoftStopTimeout (DrainTimeout); the
	// bound here only guards against a stop that never ends. The worker
	// beats while it drains.
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.DrainTimeout+2*s.cfg.Grace+30*time.Second)
	defer cancel()
	err = c.Stop(sctx)
	stopLiveness()
	lwg.Wait()
	if err != nil {
		return fmt.Errorf("worker: stop: %w", err)
	}
	s.leave(sctx, c.ID())
	return nil
}

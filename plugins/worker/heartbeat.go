package worker

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river/rivertype"
)

// Liveness: every working worker has a row in the schema's harness_worker
// table (its River client id and the database time of its last
// heartbeat), refreshed every HeartbeatTimeout/4. Every worker also looks,
// as often, for running harness_run jobs whose last attempt belongs to a
// worker whose heartbeat is older than HeartbeatTimeout, and hands them
// back to the queue (available at once, the attempt recorded as an error
// naming the gone worker; discarded when it was the last attempt,
// cancelled when a cancel was asked for). Times are the database's, so
// clocks of the workers' machines do not matter. A job whose worker has no
// row (a worker of an older harness) is left to River's rescuer.

// workerTable is the liveness table's DDL; %s is the quoted schema.
const workerTable = `CREATE TABLE IF NOT EXISTS %s.harness_worker (
	id text PRIMARY KEY,
	pid integer NOT NULL,
	host text NOT NULL,
	started_at timestamptz NOT NULL DEFAULT now(),
	heartbeat_at timestamptz NOT NULL DEFAULT now()
)`

// GoneError is the attempt error recorded for a job taken from a gone
// worker; its text starts with it.
const GoneError = "worker gone"

// q returns the schema-qualified name of table.
func (s *Service) q(table string) string {
	return pgx.Identifier{s.cfg.Schema, table}.Sanitize()
}

// beat inserts or refreshes the worker's liveness row.
func (s *Service) beat(ctx context.Context, id, host string, pid int) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO `+s.q("harness_worker")+` (id, pid, host) VALUES ($1, $2, $3)
		ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`, id, pid, host)
	if err != nil {
		return fmt.Errorf("worker: heartbeat: %w", err)
	}
	return nil
}

// leave removes the worker's liveness row (after a drain: it runs nothing).
func (s *Service) leave(ctx context.Context, id string) {
	if _, err := s.pool.Exec(ctx, `DELETE FROM `+s.q("harness_worker")+` WHERE id = $1`, id); err != nil {
		s.log.Warn("worker: removing the liveness row", "err", err)
	}
}

// reap hands the running jobs of gone workers (heartbeat older than
// HeartbeatTimeout, never self) back to the queue and returns their ids.
// Rows of workers gone for a day are deleted.
func (s *Service) reap(ctx context.Context, self string) ([]int64, error) {
	job, hw := s.q("river_job"), s.q("harness_worker")
	state := s.q("river_job_state")
	timeout := s.cfg.HeartbeatTimeout
	msg := fmt.Sprintf("%s: worker %%s sent no heartbeat for %s; the attempt is given up and the job handed back", GoneError, timeout)
	rows, err := s.pool.Query(ctx, `WITH gone AS (
		SELECT j.id, w.id AS worker FROM `+job+` j
		JOIN `+hw+` w ON w.id = j.attempted_by[array_upper(j.attempted_by, 1)]
		WHERE j.state = 'running' AND j.kind = $1 AND w.id <> $2
		  AND w.heartbeat_at < now() - make_interval(secs => $3)
		FOR UPDATE OF j SKIP LOCKED
	), decided AS (
		SELECT j.id, gone.worker, CASE
			WHEN j.metadata ? 'cancel_attempted_at' THEN 'cancelled'
			WHEN j.attempt >= j.max_attempts THEN 'discarded'
			ELSE 'available' END AS next
		FROM `+job+` j JOIN gone ON gone.id = j.id
	)
	UPDATE `+job+` j SET
		state = decided.next::`+state+`,
		finalized_at = CASE WHEN decided.next = 'available' THEN NULL ELSE now() END,
		scheduled_at = CASE WHEN decided.next = 'available' THEN now() ELSE j.scheduled_at END,
		errors = array_append(j.errors, jsonb_build_object('at', now(), 'attempt', j.attempt,
			'error', format($4, decided.worker), 'trace', ''))
	FROM decided WHERE j.id = decided.id AND j.state = 'running'
	RETURNING j.id`, RunArgs{}.Kind(), self, timeout.Seconds(), msg)
	if err != nil {
		return nil, fmt.Errorf("worker: looking for gone workers: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("worker: looking for gone workers: %w", err)
	}
	if _, err := s.pool.Exec(ctx, `DELETE FROM `+hw+` WHERE heartbeat_at < now() - interval '1 day'`); err != nil {
		return ids, fmt.Errorf("worker: pruning the liveness table: %w", err)
	}
	return ids, nil
}

// liveness beats and reaps every HeartbeatTimeout/4 until ctx ends.
// Failures (the database away) are logged and tried again next time. It
// looks for gone workers only once it has been connected (every beat
// succeeding) for HeartbeatTimeout: after a database outage that every
// worker saw, the other workers' last heartbeats are old because the
// database was away, not because they are; by then each live one has
// beaten again. A worker cut off from the database alone is taken for
// gone by the others after HeartbeatTimeout, as a dead one is.
// It also sweeps the work root ([Service.sweepWorkDirs]) at start and
// every sweepEvery.
func (s *Service) liveness(ctx context.Context, id, host string, pid int) {
	every := max(s.cfg.HeartbeatTimeout/4, 10*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	connected := time.Now() // the first beat, before Work started River
	down := false
	s.sweepWorkDirs(ctx)
	swept := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		bctx, cancel := context.WithTimeout(ctx, max(every, time.Second))
		err := s.beat(bctx, id, host, pid)
		cancel()
		switch {
		case err != nil && ctx.Err() == nil:
			if !down {
				s.log.Warn("worker: heartbeat failed; running jobs wait for the database up to dbOutageGrace", "err", err)
			}
			down = true
			continue
		case err != nil:
			return
		case down:
			s.log.Info("worker: heartbeat sent again; looking for gone workers after heartbeatTimeout", "heartbeatTimeout", s.cfg.HeartbeatTimeout)
			down, connected = false, time.Now()
		}
		if time.Since(swept) >= sweepEvery {
			s.sweepWorkDirs(ctx)
			swept = time.Now()
		}
		if time.Since(connected) < s.cfg.HeartbeatTimeout {
			continue
		}
		ids, err := s.reap(ctx, id)
		if err != nil && ctx.Err() == nil {
			s.log.Warn("worker: looking for gone workers", "err", err)
		}
		if len(ids) > 0 {
			s.log.Warn("worker: jobs of gone workers handed back to the queue", "jobs", ids)
		}
	}
}

// GoneWorkers returns which of the River client ids are of workers taken
// for gone: their heartbeat is older than HeartbeatTimeout. An id without
// a liveness row (not a worker, or an older harness) is not in the map.
func (s *Service) GoneWorkers(ctx context.Context, ids []string) (map[string]bool, error) {
	if _, err := s.ready(ctx); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT id FROM `+s.q("harness_worker")+`
		WHERE id = ANY($1) AND heartbeat_at < now() - make_interval(secs => $2)`, ids, s.cfg.HeartbeatTimeout.Seconds())
	if err != nil {
		return nil, fmt.Errorf("jobs: liveness: %w", err)
	}
	gone, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("jobs: liveness: %w", err)
	}
	for _, id := range gone {
		out[id] = true
	}
	return out, nil
}

// HeldByGoneWorker reports whether job is running on a worker taken for gone
// (see [Service.GoneWorkers], whose answer is gone).
func HeldByGoneWorker(job *rivertype.JobRow, gone map[string]bool) bool {
	return job.State == rivertype.JobStateRunning && len(job.AttemptedBy) > 0 && gone[job.AttemptedBy[len(job.AttemptedBy)-1]]
}

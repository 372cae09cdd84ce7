package worker

import (
	"context"
	"time"
)

// Database outages (Config.DBOutageGrace): a run's session appends wait
// for the database in its own process (sessions-postgres outageGrace, set
// by the run from RunSpec.DBOutageGrace); the worker process waits for it
// before reading a job's session and before handing a job's result to
// River (whose completer retries for about 7 s, then leaves the job
// running); and its liveness loop does not hand other workers' jobs back
// until it has been connected for a heartbeatTimeout again (see
// [Service.liveness]).

// pingTimeout bounds one ping of awaitDB.
const pingTimeout = 5 * time.Second

// awaitDB returns false at once when the pool answers a ping. Otherwise
// it logs and pings again with a backoff (100 ms doubling to 2 s) until
// the database answers or DBOutageGrace has passed, and returns true. ctx
// ending does not cut the wait short (a cancelled job's result is still
// to be stored), the grace does.
func (s *Service) awaitDB(ctx context.Context, job int64) bool {
	ping := func() error {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pingTimeout)
		defer cancel()
		return s.pool.Ping(pctx)
	}
	err := ping()
	if err == nil || s.cfg.DBOutageGrace <= 0 {
		return err != nil
	}
	start := time.Now()
	s.log.Warn("worker: the database does not answer; the job's result waits for it", "job", job, "dbOutageGrace", s.cfg.DBOutageGrace, "err", err)
	for wait := 100 * time.Millisecond; time.Since(start) < s.cfg.DBOutageGrace; wait = min(2*wait, 2*time.Second) {
		time.Sleep(min(wait, s.cfg.DBOutageGrace-time.Since(start)))
		if err = ping(); err == nil {
			s.log.Info("worker: the database is back", "job", job, "waited", time.Since(start).Round(time.Millisecond))
			return true
		}
	}
	s.log.Warn("worker: the database is still away after dbOutageGrace", "job", job, "err", err)
	return true
}

// Package worker is the fleet plugin: agent runs as River jobs on
// PostgreSQL, worked by any number of `harness worker` processes on any
// number of machines that share one database.
//
//	harness submit ──► Service.Submit ──► river_job (kind harness_run, args RunArgs,
//	                                          │  metadata: the submitter's W3C trace context)
//	                                          │  fetched by one worker (River: priority, queues, unique)
//	                                          ▼
//	harness worker ──► Service.Work ──► job: work dir (fresh dir, git clone, or Dir in place)
//	                                       │   session id "job-<id>-<created>" (fixed by the job)
//	                                       │   stored session? final verdict: complete · else: continue · none: new
//	                                       ▼
//	                      subprocess (own cgroup / process group, job ctx, control fd)
//	                          harness job-run  (the worker's manifest + the job's patch, cwd = work dir)
//	                            agent turn, tools in the subprocess sandbox of the work dir,
//	                            session stored through sessions-postgres
//	                                       │ the agent's verdict (stdout, and state job/verdict in the session):
//	                                       │ final answer → completed · model failure → retry by class (Retried)
//	                                       │ max steps, budget, exit 2 → cancelled · 75 → session busy: snooze
//	harness jobs [show|cancel|logs] ──► River job rows; logs = sessions.Follow of the job's session
//
// # Failures
//
// docs/fleet.md has the table (event, what happens, the test). In short:
// River owns retries (backoff, MaxAttempts) and cancellation. A worker
// that dies is noticed by its heartbeat (liveness table harness_worker,
// beat every HeartbeatTimeout/4): the other workers hand its running
// jobs back to the queue once it is silent for HeartbeatTimeout, and
// `jobs` shows them "running (worker gone, retrying)"; River's rescuer
// (RescueAfter) remains for a job whose worker has no liveness row. A
// retried job resumes its stored session with [agent.Session.Continue]:
// tool calls that have a stored result are not run again. What a retry
// can repeat: a tool call that was running when the attempt died (its
// result is stored as interrupted and the model may make it again), and
// the model call in flight.
//
// A PostgreSQL outage shorter than Config.DBOutageGrace costs no attempt:
// the run's session appends wait for the database (sessions-postgres
// outageGrace, which the run sets from RunSpec.DBOutageGrace) and are
// stored in order when it is back; the worker waits for it before it
// reads a job's session and before it hands a result to River; and a
// worker that lost the database looks for gone workers only once it has
// been connected again for HeartbeatTimeout, so the heartbeats every
// worker missed do not count. A worker cut off from the database alone is
// taken for gone, as a dead one is.
//
// Work dirs are not in PostgreSQL: a retry on the same machine (or with
// WorkRoot on a shared volume) reuses the work dir as the last attempt
// left it; on another machine it starts from a fresh one. A job's work dir
// is removed when the job ends (KeepFailed, KeepWorkDirs keep some or
// all); the dirs a worker holds of jobs that ended on other workers (a
// job it handed back) are removed by its sweep of WorkRoot, at start and
// every 10 minutes.
//
// The session's exclusive lock guards against two live attempts of one job
// (a rescue of a run that was only slow): the second child finds the
// session in use and the job is snoozed until the first one ends.
package worker

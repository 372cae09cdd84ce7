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
//	                                       │ max steps, exit 2 → cancelled · 75 → session busy: snooze
//	harness jobs [show|cancel|logs] ──► River job rows; logs = sessions.Follow of the job's session
//
// # Failures
//
// River owns retries (backoff, MaxAttempts), cancellation and rescue: a job
// whose worker died stays "running" until the leader's rescuer finds it
// older than Config.RescueAfter and makes it retryable (River checks every
// 30 s, so a rescue lands between RescueAfter and RescueAfter + 30 s). A
// retried job resumes its stored session with [agent.Session.Continue]:
// tool calls that have a stored result are not run again. What a retry can
// repeat: a tool call that was running when the worker died (its result is
// recorded as interrupted and the model may make it again), and the model
// call in flight. Work dirs are not in PostgreSQL: a retry on the same
// machine (or with WorkRoot on a shared volume) reuses the work dir as the
// last attempt left it; on another machine it starts from a fresh one.
//
// The session's exclusive lock guards against two live attempts of one job
// (a rescue of a run that was only slow): the second child finds the
// session in use and the job is snoozed until the first one ends.
package worker

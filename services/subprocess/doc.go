// Package subprocess is the harness's process seam: the "subprocess" service
// (a *Runtime) that every tool, LSP host, MCP stdio client and terminal uses
// to run programs, and its local provider, the "subprocess-local" plugin.
//
// The contract is dsh's SubprocessRuntime (reference
// subprocess-spill-tokenmeter.md part A, with the Go notes of part E). The
// seam owns process lifetime only; callers own defaults, deadlines, cause
// classification and everything model-facing (rendering a head+tail preview
// belongs to the spill policy, not here).
//
// # Picture
//
//	Spawn(Spec) ──► exec.Cmd{Setsid, explicit Env, CLONE_INTO_CGROUP}
//	                  │ stdin: ignore | pipe | data
//	                  │ stdout/stderr: pipe | inherit | collect{maxBytes, spill{maxBytes}}
//	                  │ fd 3: control socketpair (Spec.Control)
//	                  │ pump: collect and data pipes + a pidfd on one epoll, in the wait
//	                  │       goroutine; a collected stream past 1 MiB moves to a reader
//	                  │       goroutine on the runtime poller; pipes held past exit get
//	                  │       at most Grace
//	                  ▼
//	Handle ── Done/Outcome (direct child) ── Terminate (TERM → Grace → KILL of the range)
//	       └─ WaitForExit (managed range empty) ── Collected (tail + spill, ReadFrom offsets)
//
// # Spawning
//
// Every Spec field that matters is explicit: Argv (never shell-interpreted;
// a caller that wants a shell passes "bash", "-c", cmd), Dir, Stdin, Stdout,
// Stderr and Grace have no defaults and a missing one fails Spawn with
// ErrInvalidSpec before anything starts. Spawn also returns, synchronously,
// a done Spec.Context ("aborted before spawn: <cause>"), an unresolvable
// program (*ExecutableNotFoundError) and exec-time failures such as a
// missing Dir: once Spawn returned a *Handle, a process runs.
//
// # Environment
//
// A child's environment is built fresh: the parent environment minus every
// name matching SensitiveEnvPattern (KEY, PASSWORD, SECRET, TOKEN, CREDENTIAL
// anywhere, case-insensitively), the names given to ConcealEnv (the
// variables the manifest reads with !env or names in apiKeyEnv) and the HARNESS_
// namespace, minus the configured
// EnvPolicy.Deny patterns (plus EnvPolicy.Allow exceptions), then Spec.Env
// on top (an explicit entry always survives, credential-shaped or not), then
// Spec.UnsetEnv removes names. The same scrub applies to terminals and to
// ResolveExecutable. Not caught by default: PASSPHRASE, AUTH, *_PAT and URLs
// with inline passwords; add them to EnvPolicy.Deny. The
// scrubbed parent environment is cached per os.Environ snapshot: each spawn
// compares the snapshot (cheap while nothing changed) and scrubs again
// after any change, so the cache never lets a new variable through.
//
// # Collected output
//
// Collect mode keeps exactly the last MaxBytes bytes in memory (a ring, so
// memory stays flat however much the child writes). With Spill, the
// complete stream is also written to a private file (0600, O_EXCL|
// O_NOFOLLOW, in a 0700 directory) once the tail first overflows; a stream
// longer than Spill.MaxBytes has its now-incomplete file deleted and reports
// SpillCapped. CollectedOutput.ReadFrom(offset) is non-consuming and
// cursor-free; text never splits a UTF-8 sequence. stdout and stderr are
// collected and truncated separately, never merged.
//
// # Managed range and termination
//
// Each child starts in a new session (pgid = sid = pid, no controlling
// terminal). When this process can create cgroup v2 directories under its
// own cgroup (as root; as any other user only in a cgroup delegated to it:
// never the hierarchy's root, the directory, cgroup.procs and
// cgroup.subtree_control writable, as systemd's Delegate=yes makes them),
// each child is also cloned straight into its own cgroup leaf
// (CLONE_INTO_CGROUP): the managed range is then every process in that
// leaf, which includes descendants that called setsid or double-forked.
// Otherwise (IsolationProcessGroup, logged once per process at debug level;
// Runtime.Containment says why, for `harness check`) the range is the process
// group, and setsid/setpgid escapees are out of reach: a documented limit.
//
// Leaves are pooled: creating and removing one (mkdir, open, rmdir) costs
// about as much as the rest of a spawn, so a leaf whose range was observed
// empty and reads "populated 0" returns to an idle list (at most 8 per
// runtime, each holding two descriptors: the directory and its
// cgroup.events) and is lent to a later spawn; a handle's claim on it ends
// at release, so a stale handle never signals the next child. A leaf that
// was ever killed through cgroup.kill is removed instead (some kernels,
// 6.18 here, SIGKILL every later CLONE_INTO_CGROUP child of such a cgroup).
// The cost: up to 8 empty cgroups stay under the runtime's directory until
// Close. With the pool, the cgroup mode costs about what the process-group
// mode costs per spawn.
// Terminate sends SIGTERM to the range and SIGKILL (cgroup.kill) after Grace
// if anything remains; WaitForExit polls every 15 ms until the range is
// empty, zombies counting as gone (PID 1 on the CI machine never reaps
// orphans). Runtime.KillNow is the synchronous host-exit path (SIGKILL
// everything, no waiting).
//
// # When this process dies
//
// Every range dies with the process that owns the runtime, however it
// dies (SIGKILL, a crash, the OOM killer), not only on Close. Before its
// first child the runtime starts a watchdog: a /bin/sh script of this
// package, in a session of its own, ignoring SIGINT, SIGTERM and SIGHUP,
// reading a pipe that only this process can write. When this process is
// gone the pipe ends and the watchdog, at once, SIGKILLs what is left:
// with cgroup isolation the runtime's whole cgroup directory (cgroup.kill:
// every leaf, setsid escapees included; the next runtime's sweep removes
// the empty directories); with process groups, each group and terminal
// session the runtime had announced on the pipe and not yet seen empty. A
// signal to the harness's whole process group does not reach the watchdog.
//
// What remains: with process groups, a descendant that left the group
// (setsid, setpgid) is out of reach, as it is for Terminate, and so is a
// child that died with the harness between its start and its announcement
// (microseconds). Without /bin/sh there is no watchdog (logged), and a
// watchdog killed on its own (kill -9 of its pid) guards nothing; with
// cgroups the next runtime's sweep then kills and removes the cgroups of
// hosts that no longer exist. PR_SET_PDEATHSIG is not used: it reaches
// only the direct child (an npx launcher, not the node server under it),
// and Linux sends it when the forking thread exits, which the Landlock
// backend's discarded threads do. Sandboxed commands also die through
// bwrap's --die-with-parent.
//
// No signal is ever sent to a number that may have been reused: cgroup
// ranges signal only the pids the cgroup lists (and use cgroup.kill); the
// process-group fallback treats a live holder of the pgid as a newcomer
// once its leader's exit was observed (marked before the reap that frees
// the pid), and the terminal session fallback checks the leader's start
// time; the first observation that a range is empty is permanent. The
// watchdog's process-group kill checks the leader's start time too; it
// cannot recognize a group that emptied unobserved and whose number was
// then reused by a new group leader that has itself exited.
//
// The runtime marks every inherited descriptor above 2 close-on-exec when it
// starts, so children see only fds 0-2 (and fd 3 with Spec.Control).
//
// # Terminals
//
// SpawnTerminal runs a program on a fresh PTY (creack/pty; Setsid+Setctty,
// never Setpgid): ordered output that ends after every byte once the
// program exits (EIO is the normal end), Write, Resize, foreground
// inspection and signalling, activity, and an awaited Terminate that
// reaches the whole session.
//
// # Lifetime
//
// Runtime.Close (the plugin's effect disposer) terminates every live child
// and terminal and waits until each range is empty.
package subprocess

package hooks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dshgo/harness/services/subprocess"
)

// Output bounds for a hook's streams (bytes). A hook answers with a small
// JSON document; the tail beyond this is dropped.
const (
	maxHookStdout = 1 << 20
	maxHookStderr = 64 << 10
	// hookGrace is the SIGTERM→SIGKILL delay when a hook's range is
	// terminated, and how long, after the hook command itself exited, a
	// background child it left may keep its stdout or stderr open before
	// what the pipes hold is drained and the range is killed. A hook
	// answers when it exits: a child it started in the background (a
	// logger, a daemon) must not delay the decision, and does not outlive
	// the hook.
	hookGrace = 250 * time.Millisecond
)

// errHookTimeout is the cancellation cause of a hook that ran out of time.
var errHookTimeout = errors.New("hook timed out")

// runFunc runs one hook command with the payload on stdin.
type runFunc func(ctx context.Context, command string, stdin []byte, dir string, env map[string]string, timeout time.Duration) runResult

// subprocessRunner runs hooks through the subprocess service: `bash -c
// <command>` (a hook command is a shell command by definition) in its own
// managed range, stdin the payload, stdout and stderr collected. The answer
// is read when the command exits: pipes still held by a descendant are
// drained of what they hold within hookGrace, then the rest of the range is
// terminated (SIGTERM, SIGKILL after hookGrace). At the timeout the whole
// range is terminated the same way. It returns only once the range is empty.
// A hook is timed out only when its command had not exited by the timeout.
func subprocessRunner(rt *subprocess.Runtime) runFunc { return subprocessRunnerWith(rt, false) }

// subprocessRunnerWith is subprocessRunner; with sandboxed, each hook runs
// under the runtime's default sandbox policy (Config.Sandbox), with the
// hook's directory as the workspace; a default of mode off leaves it
// unsandboxed.
func subprocessRunnerWith(rt *subprocess.Runtime, sandboxed bool) runFunc {
	return func(ctx context.Context, command string, stdin []byte, dir string, env map[string]string, timeout time.Duration) runResult {
		var sb *subprocess.SandboxPolicy
		if p := rt.SandboxPolicy(); sandboxed && p.Enabled() {
			sb = &p
		}
		ctx, cancel := context.WithTimeoutCause(ctx, timeout, errHookTimeout)
		defer cancel()
		r := runResult{exitCode: -1}
		h, err := rt.Spawn(subprocess.Spec{
			Sandbox: sb,
			Context: ctx,
			Argv:    []string{"bash", "-c", command},
			Dir:     dir,
			Env:     env,
			Stdin:   subprocess.DataStdin(stdin),
			Stdout:  subprocess.Collect(maxHookStdout),
			Stderr:  subprocess.Collect(maxHookStderr),
			Grace:   hookGrace,
		})
		if err != nil {
			r.err = err
			return r
		}
		<-h.Done() // the command exited (or was killed at the timeout) and its pipes are drained
		r.timedOut = errors.Is(context.Cause(ctx), errHookTimeout)
		out, waitErr := h.Outcome()
		// Nothing of the hook outlives its answer: terminate what is left
		// of its range and wait for it to be gone.
		h.Terminate()
		wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), 2*hookGrace+time.Second)
		gone, goneErr := h.WaitForExit(wctx)
		wcancel()
		c := h.Collected()
		if c.Stdout != nil {
			r.stdout = []byte(c.Stdout.Text())
		}
		if c.Stderr != nil {
			r.stderr = []byte(c.Stderr.Text())
		}
		if out.ExitCode != nil {
			r.exitCode = *out.ExitCode
		}
		r.signal = out.Signal
		switch {
		case r.timedOut:
		case waitErr != nil:
			r.err = waitErr
		case ctx.Err() != nil && out.ExitCode == nil:
			r.err = fmt.Errorf("cancelled: %w", context.Cause(ctx))
		case r.signal == "" && out.ExitCode == nil:
			r.err = errors.New("no exit status")
		}
		if goneErr == nil && !gone {
			goneErr = fmt.Errorf("subprocess: pid %d: the hook's process range is still alive after terminate", h.Pid())
		}
		if goneErr != nil && r.err == nil && !r.timedOut {
			r.err = goneErr
		}
		return r
	}
}

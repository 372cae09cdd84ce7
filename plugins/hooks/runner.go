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
	// terminated, and how long escaped descendants may hold its pipes.
	hookGrace = 2 * time.Second
)

// errHookTimeout is the cancellation cause of a hook that ran out of time.
var errHookTimeout = errors.New("hook timed out")

// runFunc runs one hook command with the payload on stdin.
type runFunc func(ctx context.Context, command string, stdin []byte, dir string, env map[string]string, timeout time.Duration) runResult

// subprocessRunner runs hooks through the subprocess service: `bash -c
// <command>` (a hook command is a shell command by definition) in its own
// managed range, stdin the payload, stdout and stderr collected. At the
// timeout the whole range is terminated (SIGTERM, then SIGKILL after the
// grace) and its pipes closed; Run returns only once the range is empty.
func subprocessRunner(rt *subprocess.Runtime) runFunc {
	return func(ctx context.Context, command string, stdin []byte, dir string, env map[string]string, timeout time.Duration) runResult {
		ctx, cancel := context.WithTimeoutCause(ctx, timeout, errHookTimeout)
		defer cancel()
		res, err := rt.Run(subprocess.Spec{
			Context: ctx,
			Argv:    []string{"bash", "-c", command},
			Dir:     dir,
			Env:     env,
			Stdin:   subprocess.DataStdin(stdin),
			Stdout:  subprocess.Collect(maxHookStdout),
			Stderr:  subprocess.Collect(maxHookStderr),
			Grace:   hookGrace,
		})
		r := runResult{exitCode: -1, timedOut: errors.Is(context.Cause(ctx), errHookTimeout)}
		if res.Stdout != nil {
			r.stdout = []byte(res.Stdout.Text())
		}
		if res.Stderr != nil {
			r.stderr = []byte(res.Stderr.Text())
		}
		if res.Outcome.ExitCode != nil {
			r.exitCode = *res.Outcome.ExitCode
		}
		r.signal = res.Outcome.Signal
		if err != nil && !r.timedOut {
			r.err = err
		}
		if r.err == nil && !r.timedOut && ctx.Err() != nil {
			r.err = fmt.Errorf("cancelled: %w", context.Cause(ctx))
		}
		if r.err == nil && !r.timedOut && r.signal == "" && res.Outcome.ExitCode == nil {
			r.err = errors.New("no exit status")
		}
		return r
	}
}

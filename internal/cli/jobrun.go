package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/dshgo/harness/plugins/worker"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/sessions"
)

// jobRunCommand is the process a worker runs each job in (hidden): the
// job's spec (worker.RunSpec, JSON) on stdin, the work dir as cwd; it
// runs or continues the job's session and prints the result as JSON.
// Exit status: run's, or worker.ExitSessionBusy when the session is open
// elsewhere. When started with a control descriptor (the worker's
// subprocess spawn), its end-of-file (the worker died) stops the run like
// SIGTERM does.
func jobRunCommand(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:    "job-run",
		Short:  "Run one job of `harness worker` (internal)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var spec worker.RunSpec
			b, err := io.ReadAll(io.LimitReader(env.Stdin, 8<<20))
			if err == nil {
				err = json.Unmarshal(b, &spec)
			}
			if err != nil || spec.SessionID == "" {
				return UsageError(fmt.Errorf("job-run: reading the job spec from stdin: %v", err))
			}
			ctx, cancel := context.WithCancel(env.Ctx)
			defer cancel()
			watchControl(env, cancel)
			host, err := bootAgent(env, &agentFlags{})
			if err != nil {
				return err
			}
			awaitMCP(ctx, host.h) // headless, like run
			res, runErr := runJob(ctx, host, spec)
			if serr := host.stop(); serr != nil && runErr == nil {
				runErr = Failure(fmt.Errorf("stopping: %w", serr))
			}
			if res != nil {
				_ = writeJSON(env.Stdout, res)
			}
			if runErr != nil && ctx.Err() != nil && errors.Is(runErr, context.Canceled) {
				return &ExitError{Code: ExitInterrupted, Err: errors.New("interrupted")}
			}
			return runErr
		},
	}
}

// runJob opens (new, with the job's session id) or resumes the session
// and runs or continues its turn.
func runJob(ctx context.Context, host *agentHost, spec worker.RunSpec) (*agent.Result, error) {
	o := agent.Options{Model: spec.Model, MaxSteps: spec.MaxSteps, Origin: "job"}
	if spec.Resume {
		o.ID, o.Model = spec.SessionID, spec.Model
	} else {
		o.NewID = spec.SessionID
	}
	ss, err := host.agent.Open(ctx, o)
	if errors.Is(err, sessions.ErrInUse) || errors.Is(err, sessions.ErrExists) {
		return nil, &ExitError{Code: worker.ExitSessionBusy, Err: err}
	}
	if err != nil {
		return nil, classify(err)
	}
	defer func() { _ = ss.Close(context.Background()) }()
	var res *agent.Result
	if spec.Resume {
		res, err = ss.Continue(ctx)
	} else {
		res, err = ss.Run(ctx, spec.Prompt)
	}
	return res, classify(err)
}

// watchControl cancels when the control descriptor the subprocess service
// passed (HARNESS_SUBPROCESS_CONTROL) reaches end of file: the worker that
// started this run is gone.
func watchControl(env *Env, cancel context.CancelFunc) {
	if v, ok := env.LookupEnv("HARNESS_SUBPROCESS_CONTROL"); !ok || v != "3" {
		return
	}
	if err := syscall.SetNonblock(3, true); err != nil {
		return
	}
	f := os.NewFile(3, "control")
	go func() {
		defer f.Close()
		_, _ = io.Copy(io.Discard, f)
		cancel()
	}()
}

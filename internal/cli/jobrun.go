package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/plugins/worker"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/subprocess"
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
			wd, err := env.workDir()
			if err != nil {
				return Failure(err)
			}
			if err := awaitJobDatabase(ctx, env, spec.DBOutageGrace); err != nil {
				return err
			}
			boot := []BootOption{withConfinement(spec.Hide, wd), withOutageGrace(spec.DBOutageGrace)}
			if len(spec.Writable) > 0 {
				boot = append(boot, withWritableRoots(spec.Writable)) // a worktree job's worktree and git parts
			}
			host, err := bootAgent(env, &agentFlags{boot: boot})
			if err != nil {
				return err
			}
			if err := confined(env, host, spec.Hide, wd); err != nil {
				_ = host.stop() // the confinement error is what the job reports
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

// runJob opens (new, with the job's session id) or resumes the session,
// runs or continues its turn, and stores the agent's verdict in it
// (worker.VerdictKey).
func runJob(ctx context.Context, host *agentHost, spec worker.RunSpec) (*worker.Verdict, error) {
	o := agent.Options{Model: spec.Model, MaxSteps: spec.MaxSteps, Budget: spec.Budget, Origin: "job"}
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
	if res == nil {
		return nil, classify(err)
	}
	v := &worker.Verdict{Result: *res, Attempt: spec.Attempt}
	if res.Steps > 0 && !agent.IsConfigError(err) {
		// The agent's verdict, stored with the session it ends (a turn
		// refused before its first model call stored nothing): a retry
		// completes the job only if it says the turn has a final answer.
		stored := *v
		if len(stored.Text) > 4096 {
			stored.Text = stored.Text[:4096]
		}
		if b, jerr := json.Marshal(stored); jerr == nil {
			if serr := ss.SetState(worker.VerdictKey, b); serr != nil && err == nil {
				err = fmt.Errorf("storing the run's verdict: %w", serr)
			}
		}
	}
	return v, classify(err)
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

// withConfinement adds hide to the sandbox denyRead of every enabled
// subprocess-local row, and the job's work dir to its visible list (a
// job's run hides the work root, but for its own dir, and the database
// sockets from its commands); confined checks that they took.
func withConfinement(hide []string, workDir string) BootOption {
	return bootOptionFunc(func(o *fxcore.Options) {
		if len(hide) == 0 {
			return
		}
		m := o.Manifest.Clone()
		var patch func(rows []manifest.Entry)
		patch = func(rows []manifest.Entry) {
			for i := range rows {
				e := &rows[i]
				patch(e.Children)
				if e.Disabled || e.Name != "subprocess-local" || e.Config == nil || e.Config.Kind != yaml.MappingNode {
					continue
				}
				sb := getKey(e.Config, "sandbox")
				if sb == nil || sb.Kind != yaml.MappingNode {
					continue // no sandbox (mode off); confined says so
				}
				appendTo(sb, "denyRead", hide...)
				appendTo(sb, "visible", workDir)
			}
		}
		patch(m.Plugins)
		o.Manifest = m
	})
}

// awaitJobDatabase waits up to grace for the manifest's fleet databases
// to accept a connection before the run boots (a run started during an
// outage would fail its boot, which reads as a configuration error: the
// job cancelled). Still away after grace: a failure, so the job is
// retried. grace 0: no wait.
func awaitJobDatabase(ctx context.Context, env *Env, grace time.Duration) error {
	if grace <= 0 {
		return nil
	}
	dsns, err := fleetDSNs(env)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, grace)
	defer cancel()
	err = worker.WaitForDatabase(wctx, dsns, func(try int, next time.Duration, err error) {
		fmt.Fprintf(env.Stderr, "harness job-run: waiting for PostgreSQL (try %d, next in %s): %v\n", try, next, err)
	})
	switch {
	case ctx.Err() != nil:
		return errInterrupted()
	case errors.Is(err, context.DeadlineExceeded):
		return Failure(fmt.Errorf("job-run: PostgreSQL still unreachable after dbOutageGrace (%s)", grace))
	case err != nil:
		return UsageError(err)
	}
	return nil
}

// withOutageGrace sets outageGrace to grace in every enabled
// sessions-postgres row (the worker's dbOutageGrace: the run's appends
// wait that long for the database); grace 0 leaves the rows alone.
func withOutageGrace(grace time.Duration) BootOption {
	return bootOptionFunc(func(o *fxcore.Options) {
		if grace <= 0 {
			return
		}
		m := o.Manifest.Clone()
		var patch func(rows []manifest.Entry)
		patch = func(rows []manifest.Entry) {
			for i := range rows {
				e := &rows[i]
				patch(e.Children)
				if !e.Disabled && e.Name == "sessions-postgres" && e.Config != nil && e.Config.Kind == yaml.MappingNode {
					setKey(e.Config, "outageGrace", str(grace.String()))
				}
			}
		}
		patch(m.Plugins)
		o.Manifest = m
	})
}

// appendTo appends scalars to the sequence under key in mapping m (made
// when missing; left alone when it is not a sequence, which the row's
// validation then names).
func appendTo(m *yaml.Node, key string, values ...string) {
	seq := getKey(m, key)
	if seq == nil || seq.Tag == "!!null" {
		seq = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		setKey(m, key, seq)
	}
	if seq.Kind != yaml.SequenceNode {
		return
	}
	for _, v := range values {
		seq.Content = append(seq.Content, str(v))
	}
}

// confined checks that the run's sandbox hides hide but for workDir: with
// the sandbox on, every entry is in its denyRead and workDir in its
// visible list (else the run fails: its commands could read the other
// jobs' files); with it off, a warning says the job is not isolated.
func confined(env *Env, host *agentHost, hide []string, workDir string) error {
	if len(hide) == 0 {
		return nil
	}
	rt, ok := core.Lookup(host.h.Root.Context(), subprocess.Key)
	if !ok {
		return nil
	}
	p := rt.SandboxPolicy()
	if !p.Enabled() {
		fmt.Fprintln(env.Stderr, "harness job-run: warning: the sandbox is off (subprocess row): this job's commands can read the other jobs' work dirs and the worker's files")
		return nil
	}
	for _, d := range hide {
		if !slices.Contains(p.DenyRead, d) || !slices.Contains(p.Visible, workDir) {
			return Failure(fmt.Errorf("job-run: could not add %s to the sandbox's denyRead and %s to its visible list (the subprocess row's sandbox block is not a plain mapping with those lists): the job would not be isolated", d, workDir))
		}
	}
	return nil
}

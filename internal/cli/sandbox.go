package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/spf13/cobra"
)

// sandboxGrace is the SIGTERM→SIGKILL grace of `harness sandbox` when it
// is interrupted.
const sandboxGrace = 3 * time.Second

func init() {
	Register(func(env *Env) *cobra.Command {
		var mode string
		var network bool
		cmd := &cobra.Command{
			Use:   "sandbox [--mode M] [--network] -- CMD [ARG...]",
			Short: "Run one command in the OS sandbox, as the bash tool would",
			Long: "sandbox boots the configured harness and runs CMD (not through a shell) under the\n" +
				"subprocess row's default sandbox policy with the current directory as the workspace,\n" +
				"exactly as the bash tool runs a command. --mode (off, read-only, workspace-write) and\n" +
				"--network override the policy's mode and network. The enforcement report goes to\n" +
				"stderr first (`harness sandbox: bwrap: full`); stdin, stdout and stderr are the\n" +
				"command's. The exit code is the command's (128+N for signal N); 2 for usage errors,\n" +
				"1 when the sandbox cannot start (the error says how to install bubblewrap or opt out).",
			Args: func(cmd *cobra.Command, args []string) error {
				if len(args) == 0 {
					return UsageError(errors.New("sandbox needs a command after --"))
				}
				return nil
			},
			RunE: func(cmd *cobra.Command, args []string) (err error) {
				if mode != "" && mode != string(subprocess.SandboxOff) && mode != string(subprocess.SandboxReadOnly) && mode != string(subprocess.SandboxWorkspaceWrite) {
					return UsageError(fmt.Errorf("--mode %q: want off, read-only or workspace-write", mode))
				}
				h, err := env.Boot()
				if err != nil {
					return err
				}
				defer func() {
					if serr := stopHarness(h); serr != nil && err == nil {
						err = Failure(fmt.Errorf("stopping: %w", serr))
					}
				}()
				rt, ok := core.Lookup(h.Root.Context(), subprocess.Key)
				if !ok {
					return UsageError(fmt.Errorf("no subprocess service: mount the subprocess-local plugin in harness.yml"))
				}
				policy := rt.SandboxPolicy()
				if mode != "" {
					policy.Mode = subprocess.SandboxMode(mode)
				}
				if network {
					policy.Network = true
				}
				if policy.Enabled() {
					// The probe, explicitly and interruptibly; --mode off needs none.
					if err := rt.ProbeSandbox(env.Ctx); err != nil {
						return Failure(err)
					}
				}
				dir, err := env.Getwd()
				if err != nil {
					return Failure(err)
				}
				return runSandboxed(env, rt, policy, dir, args)
			},
		}
		cmd.Flags().StringVar(&mode, "mode", "", "sandbox mode: off, read-only or workspace-write (default: the configured policy's)")
		cmd.Flags().BoolVar(&network, "network", false, "allow network access")
		return cmd
	})
}

// runSandboxed runs argv under policy in dir with the CLI's streams and
// maps its outcome to the exit code.
func runSandboxed(env *Env, rt *subprocess.Runtime, policy subprocess.SandboxPolicy, dir string, argv []string) error {
	ctx, cancel := context.WithCancel(env.Ctx)
	defer cancel()
	h, err := rt.Spawn(subprocess.Spec{Context: ctx, Argv: argv, Dir: dir, Sandbox: &policy,
		Stdin: subprocess.PipeStdin(), Stdout: subprocess.PipeOutput(), Stderr: subprocess.PipeOutput(), Grace: sandboxGrace})
	if err != nil {
		return Failure(err)
	}
	fmt.Fprintf(env.Stderr, "harness sandbox: %s\n", h.Sandbox())
	go func() {
		_, _ = io.Copy(h.Stdin(), env.Stdin)
		_ = h.Stdin().Close()
	}()
	var wg sync.WaitGroup
	for _, s := range []struct {
		dst io.Writer
		src io.ReadCloser
	}{{env.Stdout, h.Stdout()}, {env.Stderr, h.Stderr()}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = io.Copy(s.dst, s.src)
			_ = s.src.Close()
		}()
	}
	wg.Wait()
	out, err := h.Wait(context.Background())
	if err != nil {
		return Failure(err)
	}
	h.Terminate()
	_, _ = h.WaitForExit(context.Background())
	switch {
	case out.ExitCode != nil && *out.ExitCode == 0:
		return nil
	case out.ExitCode != nil:
		return &ExitError{Code: *out.ExitCode, Err: errSilent}
	default:
		return &ExitError{Code: 128 + signalNumber(out.Signal), Err: errSilent}
	}
}

// errSilent is an exit status whose cause the command already printed.
var errSilent = errors.New("")

func signalNumber(name string) int {
	for i, n := range []string{"", "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS", "SIGFPE", "SIGKILL", "SIGUSR1", "SIGSEGV", "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM"} {
		if n == name && i > 0 {
			return i
		}
	}
	return 0
}

// sandboxLine is `harness check`'s summary of the default sandbox policy
// and what the probe found, e.g.
// "sandbox: workspace-write, network off, via bwrap: full".
func sandboxLine(rt *subprocess.Runtime) string {
	p, rep := rt.Sandbox()
	net := "off"
	if p.Network {
		net = "on"
	}
	s := fmt.Sprintf("sandbox: %s, network %s", p.Mode, net)
	if !p.Enabled() {
		if b, errs := rt.SandboxBackend(); b != "" {
			return s + " (backend " + b + " available)"
		} else if len(errs) > 0 {
			return s + " (no backend works here)"
		}
		return s
	}
	s += fmt.Sprintf(", via %s: %s", rep.Backend, rep.Enforcement)
	for _, r := range rep.Reasons {
		s += "\n  - " + strings.TrimSpace(r)
	}
	return s
}

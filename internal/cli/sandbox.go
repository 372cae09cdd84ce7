package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/subprocess/sandbox"
	"github.com/spf13/cobra"
)

// sandboxGrace is the SIGTERM→SIGKILL grace of `harness sandbox` when it
// is interrupted.
const sandboxGrace = 3 * time.Second

// sandboxCommand builds `harness sandbox`.
func sandboxCommand(env *Env) *cobra.Command {
	var mode string
	var network, report bool
	cmd := &cobra.Command{
		Use:   "sandbox [--mode M] [--network] (--report | -- CMD [ARG...])",
		Short: "Run one command in the OS sandbox, as the bash tool would",
		Long: "sandbox boots the configured harness and runs CMD (not through a shell) under the\n" +
			"subprocess row's default sandbox policy with the current directory as the workspace,\n" +
			"exactly as the bash tool runs a command. --mode (off, read-only, workspace-write) and\n" +
			"--network override the policy's mode and network. The enforcement report goes to\n" +
			"stderr first (`harness sandbox: bwrap: full`); stdin, stdout and stderr are the\n" +
			"command's. The exit code is the command's (128+N for signal N); 2 for usage errors,\n" +
			"1 when the sandbox cannot start (the error says how to install bubblewrap or opt out).\n" +
			"--report prints the policy, what the backend enforces, how each command's processes are\n" +
			"contained (cgroup v2 or process groups, and why) and the toolchain caches\n" +
			"(sandbox.caches: each variable and the directory of the harness's cache root it\n" +
			"points to) instead of running a command.",
		Args: func(cmd *cobra.Command, args []string) error {
			if report && len(args) > 0 {
				return UsageError(errors.New("sandbox --report takes no command"))
			}
			if len(args) == 0 && !report {
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
				policy.Network = subprocess.SandboxNetwork{Mode: subprocess.SandboxNetworkOn}
			}
			if policy.Enabled() {
				// The probe, explicitly and interruptibly; --mode off needs none.
				if err := rt.ProbeSandbox(env.Ctx); err != nil {
					return Failure(err)
				}
			}
			if report {
				return printSandboxReport(env.Stdout, rt, policy)
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
	cmd.Flags().BoolVar(&report, "report", false, "print the policy, its enforcement and the toolchain caches; run nothing")
	return cmd
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
	for _, n := range h.NetworkRefused() {
		fmt.Fprintln(env.Stderr, n)
	}
	switch {
	case out.ExitCode != nil && *out.ExitCode == 0:
		return nil
	case out.ExitCode != nil:
		return &ExitError{Code: *out.ExitCode, Err: errSilent}
	default:
		return &ExitError{Code: 128 + signalNumber(out.Signal), Err: errSilent}
	}
}

// printSandboxReport is `harness sandbox --report`: the policy and its
// enforcement as `harness check` prints them, then the toolchain caches.
func printSandboxReport(w io.Writer, rt *subprocess.Runtime, policy subprocess.SandboxPolicy) error {
	rep := rt.CheckSandbox(policy)
	backend, errs := "", []error(nil)
	if !policy.Enabled() {
		backend, errs = rt.SandboxBackend()
	}
	line, warning := describeSandbox(policy, rep, backend, len(errs) > 0)
	fmt.Fprintln(w, line)
	if rep.NoOS() {
		fmt.Fprintln(w, "WARN: "+warning)
	}
	fmt.Fprintln(w, containmentLine(rt))
	printPolicyParts(w, policy, rep.Backend)
	dirs, err := policy.CacheDirs()
	switch {
	case err != nil:
		return Failure(fmt.Errorf("sandbox caches: %w", err))
	case !policy.Enabled():
	case policy.Mode != subprocess.SandboxWorkspaceWrite:
		fmt.Fprintf(w, "caches: none in %s mode: toolchains see your own caches, read-only\n", policy.Mode)
	case len(dirs) == 0:
		fmt.Fprintln(w, "caches: off: toolchains see your own caches, read-only")
	default:
		root, _ := sandbox.CacheRoot()
		fmt.Fprintf(w, "caches: %s (writable; your own caches stay read-only)\n", root)
		for _, d := range dirs {
			fmt.Fprintf(w, "  %s: %s=%s\n", d.Cache, d.Env, d.Dir)
		}
	}
	return nil
}

// printPolicyParts prints the policy part by part with the mechanism of
// the backend and of the in-process checker (sandbox.Describe), and who
// runs under it. Nothing when no backend enforces it.
func printPolicyParts(w io.Writer, policy subprocess.SandboxPolicy, backend string) {
	if !slices.Contains(sandbox.BackendNames(), backend) || backend == sandbox.BackendNone {
		return
	}
	fmt.Fprintf(w, "applies to: bash and its terminals, ripgrep of grep/glob (read-only), MCP stdio servers without sandbox: off, hooks with sandbox: true (%s); read, write, edit, grep, glob and the web file list (in process)\n", backend)
	for _, part := range sandbox.Describe(policy, backend) {
		fmt.Fprintf(w, "%s:\n", part.Name)
		for _, v := range part.Value {
			fmt.Fprintf(w, "  %s\n", v)
		}
		for _, b := range part.By {
			fmt.Fprintf(w, "  - %s\n", b)
		}
	}
}

// containmentLine is the account of how the runtime bounds each command's
// processes (`harness check`, `harness sandbox --report`): the one place a
// user reads that commands fall back to process groups, and the fix.
func containmentLine(rt *subprocess.Runtime) string {
	return "containment: " + rt.Containment().String()
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

// sandboxSummary is `harness check`'s account of the subprocess row's
// default sandbox policy and what the probe found: the line for stdout, and
// a warning for stderr ("" when commands are confined).
func sandboxSummary(rt *subprocess.Runtime) (line, warning string) {
	p, rep := rt.Sandbox()
	backend := ""
	probeFailed := false
	if !p.Enabled() {
		var errs []error
		backend, errs = rt.SandboxBackend()
		probeFailed = len(errs) > 0
	}
	return describeSandbox(p, rep, backend, probeFailed)
}

// noOSSandboxWarning is the warning of a platform without an OS sandbox
// (Windows).
const noOSSandboxWarning = "UNSANDBOXED: this platform has no OS sandbox, so the commands the agent runs (bash, powershell, hooks, MCP servers) " +
	"run with your user's full rights: every file you can change, the network, your other processes. " +
	"The permission plugin asks before each command no allow rule covers (sandboxed auto-allow does not apply); approve only what you would run yourself"

// describeSandbox renders the policy p and its report rep. On:
// "sandbox: workspace-write, network off, via bwrap: full" (one
// "  - reason" line per thing a partial backend cannot enforce). Off:
// "sandbox: off: commands run unsandboxed" with the backend a policy could
// use (backend, or probeFailed when none works) and a warning that
// commands have the user's full access. On but no backend: the line and
// a warning say that sandboxed commands fail to start. Network is named
// only when a backend enforces the policy.
func describeSandbox(p subprocess.SandboxPolicy, rep subprocess.SandboxReport, backend string, probeFailed bool) (line, warning string) {
	if !p.Enabled() {
		line = "sandbox: off: commands run unsandboxed"
		switch {
		case backend == sandbox.BackendNone:
			line += " (this platform has no OS sandbox)"
		case backend != "":
			line += " (backend " + backend + " available)"
		case probeFailed:
			line += " (no backend works here)"
		}
		return line, "the sandbox is off (sandbox mode off in the subprocess row): commands the agent runs are not confined " +
			"and have your full access to files and network; set sandbox: {mode: workspace-write} there to confine them"
	}
	if rep.NoOS() {
		return fmt.Sprintf("sandbox: %s requested, but this platform has no OS sandbox: commands run UNSANDBOXED", p.Mode), noOSSandboxWarning
	}
	if rep.Enforcement == subprocess.EnforcementNone {
		line = fmt.Sprintf("sandbox: %s required, but no backend works here: sandboxed commands fail to start", p.Mode)
		for _, r := range rep.Reasons {
			line += "\n  - " + strings.TrimSpace(r)
		}
		return line, fmt.Sprintf("the sandbox (%s) has no working backend here: every sandboxed command the agent runs fails to start; "+
			sandbox.FixHint()+", or set sandbox: {mode: off} in the subprocess row to run commands unsandboxed", p.Mode)
	}
	line = fmt.Sprintf("sandbox: %s, network %s, via %s: %s", p.Mode, p.Network, rep.Backend, rep.Enforcement)
	for _, r := range rep.Reasons {
		line += "\n  - " + strings.TrimSpace(r)
	}
	return line, ""
}

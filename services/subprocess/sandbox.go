package subprocess

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/dshgo/harness/services/subprocess/sandbox"
)

// SandboxPolicy is what a sandboxed child may do (package sandbox): mode
// off | read-only | workspace-write, writableRoots, network, denyRead. On
// a Spec or TerminalSpec, the workspace (writable in workspace-write mode)
// is the spawn's Dir.
type SandboxPolicy = sandbox.Policy

// SandboxMode is a SandboxPolicy's mode.
type SandboxMode = sandbox.Mode

// SandboxReport is what the sandbox enforces for a spawn or a policy:
// Backend ("bwrap", "landlock" or "none"), Enforcement (full, partial,
// none) and the Reasons for anything short of full.
type SandboxReport = sandbox.Report

// SandboxEnforcement is full, partial or none.
type SandboxEnforcement = sandbox.Enforcement

// Sandbox modes and enforcement levels, re-exported from package sandbox.
const (
	SandboxOff            = sandbox.ModeOff
	SandboxReadOnly       = sandbox.ModeReadOnly
	SandboxWorkspaceWrite = sandbox.ModeWorkspaceWrite

	EnforcementFull    = sandbox.EnforcementFull
	EnforcementPartial = sandbox.EnforcementPartial
	EnforcementNone    = sandbox.EnforcementNone
)

// ProtectedChange is a protected path (core.ProtectedPaths) that a
// sandboxed command created, changed or deleted, and what was done about
// it; its String is the notice for the command's result.
type ProtectedChange = sandbox.ProtectedChange

// ErrSandboxUnavailable is wrapped by the spawn error when a spec requires
// a sandbox and no backend works here; the message says how to install
// bubblewrap or opt out with `sandbox: {mode: off}`.
var ErrSandboxUnavailable = sandbox.ErrUnavailable

// sandboxState is the runtime's backend, probed once: by the first get, or
// in the background from start (get then waits for that probe).
type sandboxState struct {
	prefer  string
	once    sync.Once
	backend sandbox.Backend
	errs    []error

	// bg is closed when the background probe's goroutine returns; nil when
	// start was not called. cancel ends that probe (Close).
	bg     chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
}

func (s *sandboxState) get() (sandbox.Backend, []error) {
	s.once.Do(func() {
		ctx := s.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		s.backend, s.errs = sandbox.ProbeContext(ctx, s.prefer)
	})
	return s.backend, s.errs
}

// start runs the probe in the background, so that its bwrap run (the
// namespaces' set-up, several milliseconds of waiting) overlaps what the
// caller does next. Call it at most once, before the state is shared.
func (s *sandboxState) start() {
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.bg = make(chan struct{})
	go func() {
		defer close(s.bg)
		s.get()
	}()
}

// close ends a background probe still running and waits for it, then
// releases what the backend holds (Landlock's private TMPDIR, the
// zygotes). No probe runs after close.
func (s *sandboxState) close() {
	if s.bg != nil {
		s.cancel()
		<-s.bg
	}
	s.once.Do(func() {}) // no probe after Close
	if c, ok := s.backend.(interface{ Close() error }); ok {
		_ = c.Close()
	}
}

// Sandbox returns the deployment's default policy for agent commands (the
// plugin config's sandbox: block) and what the chosen backend enforces for
// it. With mode off, or when no backend works, the report's enforcement is
// none and its reasons say why. The first call probes the backends (bwrap
// runs once, a few milliseconds), or waits for the probe ProbeSandbox
// started; later calls are free.
func (r *Runtime) Sandbox() (SandboxPolicy, SandboxReport) {
	p := r.sandboxPolicy.Clone()
	return p, r.checkSandbox(&p)
}

// ProbeSandbox starts the backend probe in the background when the default
// policy is on, so that a later Sandbox, SandboxBackend or sandboxed spawn
// finds it done or under way instead of running it then. It is for the
// runtime's owner, right after New and before the runtime is shared (the
// subprocess-local plugin calls it); a second call does nothing. Close
// ends a probe still running.
func (r *Runtime) ProbeSandbox() {
	if r.sandboxPolicy.Enabled() && r.sandbox.bg == nil {
		r.sandbox.start()
	}
}

// SandboxBackend names the backend the probe chose ("bwrap", "landlock"),
// or "" with the probe failures when none works.
func (r *Runtime) SandboxBackend() (string, []error) {
	b, errs := r.sandbox.get()
	if b == nil {
		return "", errs
	}
	return b.Name(), nil
}

// checkSandbox is the report for policy p without spawning.
func (r *Runtime) checkSandbox(p *SandboxPolicy) SandboxReport {
	if !p.Enabled() {
		return sandbox.Unsandboxed("sandbox mode is off")
	}
	b, errs := r.sandbox.get()
	if b == nil {
		return sandbox.Unsandboxed((&sandbox.UnavailableError{Causes: errs}).Error())
	}
	return b.Check(*p)
}

// wrapSandbox rewrites a spawn to run under policy p (nil or off: no
// change, report none). It fails when p is enabled and no backend works,
// never running the command unsandboxed. shareable: the caller starts the
// command into a cgroup leaf of its own, so it may run in a sandbox shared
// with other commands of the same policy (sandbox.Command.Zygote).
//
// The guard (nil when nothing is protected: mode off or read-only) has
// recorded the protected paths of the workspace and the writable roots;
// the caller runs its Check once the command's range ended.
func (r *Runtime) wrapSandbox(p *SandboxPolicy, dir, path string, argv, env []string, terminal bool, extraRW []string, shareable bool) (sandbox.Command, SandboxReport, *sandbox.Guard, error) {
	if !p.Enabled() {
		return sandbox.Command{Path: path, Args: argv, Env: env}, sandbox.Unsandboxed("no sandbox requested"), nil, nil
	}
	if err := p.Validate(); err != nil {
		return sandbox.Command{}, SandboxReport{}, nil, invalid("sandbox.%v", err)
	}
	b, errs := r.sandbox.get()
	if b == nil {
		return sandbox.Command{}, SandboxReport{}, nil, &sandbox.UnavailableError{Causes: errs}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return sandbox.Command{}, SandboxReport{}, nil, fmt.Errorf("subprocess: sandbox: working directory: %w", err)
	}
	if st, err := os.Stat(abs); err != nil {
		return sandbox.Command{}, SandboxReport{}, nil, fmt.Errorf("subprocess: start %s: working directory: %w", argv[0], err)
	} else if !st.IsDir() {
		return sandbox.Command{}, SandboxReport{}, nil, fmt.Errorf("subprocess: start %s: working directory %s: not a directory", argv[0], dir)
	}
	req := sandbox.Request{Policy: *p, Dir: abs, Path: path, Argv: argv, Env: env, Terminal: terminal, ExtraWritable: extraRW, Shareable: shareable && !r.noZygote}
	cmd, rep, err := b.Wrap(req)
	if err != nil {
		return sandbox.Command{}, SandboxReport{}, nil, fmt.Errorf("subprocess: sandbox (%s): %w", b.Name(), err)
	}
	return cmd, rep, sandbox.NewGuard(req, cmd.ReadOnly), nil
}

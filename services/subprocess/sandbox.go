package subprocess

import (
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

// ErrSandboxUnavailable is wrapped by the spawn error when a spec requires
// a sandbox and no backend works here; the message says how to install
// bubblewrap or opt out with `sandbox: {mode: off}`.
var ErrSandboxUnavailable = sandbox.ErrUnavailable

// sandboxState is the runtime's lazily probed backend.
type sandboxState struct {
	prefer  string
	once    sync.Once
	backend sandbox.Backend
	errs    []error
}

func (s *sandboxState) get() (sandbox.Backend, []error) {
	s.once.Do(func() { s.backend, s.errs = sandbox.Probe(s.prefer) })
	return s.backend, s.errs
}

// close releases what the backend holds (Landlock's private TMPDIR).
func (s *sandboxState) close() {
	s.once.Do(func() {}) // no probe after Close
	if c, ok := s.backend.(interface{ Close() error }); ok {
		_ = c.Close()
	}
}

// Sandbox returns the deployment's default policy for agent commands (the
// plugin config's sandbox: block) and what the chosen backend enforces for
// it. With mode off, or when no backend works, the report's enforcement is
// none and its reasons say why. The first call probes the backends (bwrap
// runs once, a few milliseconds); later calls are free.
func (r *Runtime) Sandbox() (SandboxPolicy, SandboxReport) {
	p := r.sandboxPolicy.Clone()
	return p, r.checkSandbox(&p)
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
func (r *Runtime) wrapSandbox(p *SandboxPolicy, dir, path string, argv, env []string, terminal bool, extraRW []string, shareable bool) (sandbox.Command, SandboxReport, error) {
	if !p.Enabled() {
		return sandbox.Command{Path: path, Args: argv, Env: env}, sandbox.Unsandboxed("no sandbox requested"), nil
	}
	if err := p.Validate(); err != nil {
		return sandbox.Command{}, SandboxReport{}, invalid("sandbox.%v", err)
	}
	b, errs := r.sandbox.get()
	if b == nil {
		return sandbox.Command{}, SandboxReport{}, &sandbox.UnavailableError{Causes: errs}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return sandbox.Command{}, SandboxReport{}, fmt.Errorf("subprocess: sandbox: working directory: %w", err)
	}
	if st, err := os.Stat(abs); err != nil {
		return sandbox.Command{}, SandboxReport{}, fmt.Errorf("subprocess: start %s: working directory: %w", argv[0], err)
	} else if !st.IsDir() {
		return sandbox.Command{}, SandboxReport{}, fmt.Errorf("subprocess: start %s: working directory %s: not a directory", argv[0], dir)
	}
	cmd, rep, err := b.Wrap(sandbox.Request{Policy: *p, Dir: abs, Path: path, Argv: argv, Env: env, Terminal: terminal, ExtraWritable: extraRW, Shareable: shareable && !r.noZygote})
	if err != nil {
		return sandbox.Command{}, SandboxReport{}, fmt.Errorf("subprocess: sandbox (%s): %w", b.Name(), err)
	}
	return cmd, rep, nil
}

package subprocess

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/dshgo/harness/services/subprocess/sandbox"
	"github.com/dshgo/harness/services/subprocess/sandbox/netproxy"
)

// SandboxPolicy is what a sandboxed child may do (package sandbox): mode
// off | read-only | workspace-write, writableRoots, network, denyRead. On
// a Spec or TerminalSpec, the workspace (writable in workspace-write mode)
// is the spawn's Dir.
type SandboxPolicy = sandbox.Policy

// SandboxNetwork is a SandboxPolicy's network: off, on, or the domains
// reachable through the harness's proxy.
type SandboxNetwork = sandbox.Network

// SandboxMode is a SandboxPolicy's mode.
type SandboxMode = sandbox.Mode

// SandboxReport is what the sandbox enforces for a spawn or a policy:
// Backend ("bwrap", "landlock" or "none"), Enforcement (full, partial,
// none) and the Reasons for anything short of full.
type SandboxReport = sandbox.Report

// SandboxEnforcement is full, partial or none.
type SandboxEnforcement = sandbox.Enforcement

// Sandbox modes, network modes and enforcement levels, re-exported from package sandbox.
const (
	SandboxOff            = sandbox.ModeOff
	SandboxReadOnly       = sandbox.ModeReadOnly
	SandboxWorkspaceWrite = sandbox.ModeWorkspaceWrite

	SandboxNetworkOff   = sandbox.NetworkOff
	SandboxNetworkOn    = sandbox.NetworkOn
	SandboxNetworkProxy = sandbox.NetworkProxy

	EnforcementFull    = sandbox.EnforcementFull
	EnforcementPartial = sandbox.EnforcementPartial
	EnforcementNone    = sandbox.EnforcementNone
)

// NetworkAnswer is a person's answer about a host the network rules do
// not decide (a proxied network with ask set): allow once, allow always
// (for the runtime's life), deny, or unavailable (no one to ask: refused).
type NetworkAnswer = netproxy.Answer

// Network answers, re-exported from package netproxy.
const (
	NetworkAskUnavailable = netproxy.AskUnavailable
	NetworkAllowOnce      = netproxy.AskAllowOnce
	NetworkAllowAlways    = netproxy.AskAllowAlways
	NetworkDeny           = netproxy.AskDeny
)

// NetworkAsker asks whoever can answer whether a sandboxed command may
// connect to host:port; it blocks until an answer or ctx ends.
type NetworkAsker = func(ctx context.Context, host string, port int) NetworkAnswer

// SetNetworkAsker makes ask the answerer for the hosts of a proxied
// network with ask set that no rule decides; remove undoes it (when it is
// still the current one). Without an asker such hosts are refused.
func (r *Runtime) SetNetworkAsker(ask NetworkAsker) (remove func()) {
	p := &ask
	r.netAsker.Store(p)
	return func() { r.netAsker.CompareAndSwap(p, nil) }
}

// AskNetwork puts one question about host:port to the current network
// asker (SetNetworkAsker), as the proxy does for a sandboxed command's
// connection; NetworkAskUnavailable when there is none. It is for an
// in-process client held to the same policy (the web tools). It blocks
// until an answer or ctx ends.
func (r *Runtime) AskNetwork(ctx context.Context, host string, port int) NetworkAnswer {
	return r.askNetwork(ctx, host, port)
}

// askNetwork puts one question to the current asker (unavailable when
// there is none).
func (r *Runtime) askNetwork(ctx context.Context, host string, port int) netproxy.Answer {
	p := r.netAsker.Load()
	if p == nil || *p == nil {
		return netproxy.AskUnavailable
	}
	return (*p)(ctx, host, port)
}

// ProtectedChange is a protected path (sandbox.ProtectedPaths) that a
// sandboxed command created, changed or deleted, and what was done about
// it; its String is the notice for the command's result.
type ProtectedChange = sandbox.ProtectedChange

// ErrSandboxUnavailable is wrapped by the spawn error when a spec requires
// a sandbox and no backend works here; the message says how to install
// bubblewrap or opt out with `sandbox: {mode: off}`.
var ErrSandboxUnavailable = sandbox.ErrUnavailable

// sandboxState is the runtime's backend, probed once and on demand: the
// first get (a sandboxed spawn, Sandbox, SandboxBackend, ProbeSandbox)
// starts the probe on a goroutine of its own, and that get and every later
// one wait for the same probe, each for at most its own ctx. The probe is
// bounded by its own timeout (sandbox.ProbeContext) and by close, never by
// a caller's ctx: a caller that gives up does not fail it for the others.
// A runtime that never asks for the backend never runs bwrap.
type sandboxState struct {
	prefer string
	// probe is sandbox.ProbeContext when nil. Tests wrap the real probe
	// (to count its runs or hold it back); they do not replace it.
	probe func(context.Context, string) (sandbox.Backend, []error)

	mu     sync.Mutex
	done   chan struct{} // nil until the probe starts; closed once it returned
	cancel context.CancelFunc
	closed bool

	// backend and errs are the probe's result, read after done is closed.
	backend sandbox.Backend
	errs    []error
}

// get returns the backend the probe chose, or nil and the failure of
// every backend tried. It starts the probe unless it started already,
// then waits for it; err is set when ctx ended first (its cause), or when
// the state was closed before any probe started (ErrClosed).
func (s *sandboxState) get(ctx context.Context) (sandbox.Backend, []error, error) {
	done, err := s.start()
	if err != nil {
		return nil, nil, err
	}
	select {
	case <-done:
		return s.backend, s.errs, nil
	case <-ctx.Done():
		return nil, nil, fmt.Errorf("subprocess: waiting for the sandbox probe: %w", context.Cause(ctx))
	}
}

// start starts the probe unless it started already, and returns the
// channel closed when it has returned.
func (s *sandboxState) start() (<-chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done != nil {
		return s.done, nil
	}
	if s.closed {
		return nil, ErrClosed
	}
	probe := s.probe
	if probe == nil {
		probe = sandbox.ProbeContext
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.done, s.cancel = done, cancel
	go func() {
		defer close(done)
		s.backend, s.errs = probe(ctx, s.prefer)
	}()
	return done, nil
}

// close ends a probe still running and waits for it, then releases what
// the backend holds (Landlock's private TMPDIR, the zygotes). No probe
// starts after close.
func (s *sandboxState) close() {
	s.mu.Lock()
	s.closed = true
	done, cancel := s.done, s.cancel
	s.mu.Unlock()
	if done == nil {
		return
	}
	cancel()
	<-done
	if c, ok := s.backend.(interface{ Close() error }); ok {
		_ = c.Close()
	}
}

// Sandbox returns the deployment's default policy for agent commands (the
// plugin config's sandbox: block) and what the chosen backend enforces for
// it. With mode off, or when no backend works, the report's enforcement is
// none and its reasons say why. With the mode on, the first call runs the
// backend probe (bwrap runs once, a few milliseconds) or waits for the one
// under way, bounded by the probe's own timeout and by Close; later calls
// are free. SandboxPolicy returns the policy without probing.
func (r *Runtime) Sandbox() (SandboxPolicy, SandboxReport) {
	p := r.sandboxPolicy.Clone()
	return p, r.checkSandbox(context.Background(), &p)
}

// CheckSandbox is what the chosen backend enforces for policy p, as
// Sandbox reports it for the default policy (it probes when the mode is
// on and no probe ran yet).
func (r *Runtime) CheckSandbox(p SandboxPolicy) SandboxReport {
	return r.checkSandbox(context.Background(), &p)
}

// SandboxPolicy returns the deployment's default policy for agent
// commands, as Sandbox does, without probing the backends: for a caller
// that only passes the policy on to a spawn (which probes if it must).
func (r *Runtime) SandboxPolicy() SandboxPolicy {
	return r.sandboxPolicy.Clone()
}

// ProbeSandbox runs the backend probe now, whatever the default policy,
// unless it ran or is running, and waits for it for at most ctx. Nothing
// probes before it is needed: the first sandboxed spawn, Sandbox,
// SandboxBackend or ProbeSandbox starts the probe, once per runtime, and
// concurrent callers share it. ProbeSandbox is for a caller that reports
// the result (`harness check`) or is about to spawn sandboxed and wants
// an interruptible wait. Its error is ctx's cause when ctx ended first
// (the probe goes on for the others), or ErrClosed after Close; a probe
// that finds no working backend is no error (SandboxBackend says why).
func (r *Runtime) ProbeSandbox(ctx context.Context) error {
	if ctx == nil {
		return errors.New("subprocess: ProbeSandbox: nil context")
	}
	_, _, err := r.sandbox.get(ctx)
	return err
}

// SandboxBackend names the backend the probe chose ("bwrap", "landlock"),
// or "" with the probe failures when none works.
func (r *Runtime) SandboxBackend() (string, []error) {
	b, errs, err := r.sandbox.get(context.Background())
	if err != nil {
		return "", []error{err}
	}
	if b == nil {
		return "", errs
	}
	return b.Name(), nil
}

// checkSandbox is the report for policy p without spawning.
func (r *Runtime) checkSandbox(ctx context.Context, p *SandboxPolicy) SandboxReport {
	if !p.Enabled() {
		return sandbox.Unsandboxed("sandbox mode is off")
	}
	b, errs, err := r.sandbox.get(ctx)
	if err != nil {
		return sandbox.Unsandboxed(err.Error())
	}
	if b == nil {
		return sandbox.Unsandboxed((&sandbox.UnavailableError{Causes: errs}).Error())
	}
	return b.Check(*p)
}

// wrapSandbox rewrites a spawn to run under policy p (nil or off: no
// change, report none). It fails when p is enabled and no backend works,
// never running the command unsandboxed, and when ctx (the spawn's) ends
// while it waits for the backend probe (the first sandboxed spawn starts
// it). shareable: the caller starts the
// command into a cgroup leaf of its own, so it may run in a sandbox shared
// with other commands of the same policy (sandbox.Command.Zygote).
//
// The guard (nil when nothing is protected: mode off or read-only) has
// recorded the protected paths of the workspace and the writable roots;
// the caller runs its Check once the command's range ended.
func (r *Runtime) wrapSandbox(ctx context.Context, p *SandboxPolicy, dir, path string, argv, env []string, terminal bool, extraRW []string, shareable bool) (sandbox.Command, SandboxReport, *sandbox.Guard, error) {
	if !p.Enabled() {
		return sandbox.Command{Path: path, Args: argv, Env: env}, sandbox.Unsandboxed("no sandbox requested"), nil, nil
	}
	if err := p.Validate(); err != nil {
		return sandbox.Command{}, SandboxReport{}, nil, invalid("sandbox.%v", err)
	}
	b, errs, err := r.sandbox.get(ctx)
	if err != nil {
		return sandbox.Command{}, SandboxReport{}, nil, err
	}
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
	req := sandbox.Request{Policy: *p, Dir: abs, Path: path, Argv: argv, Env: env, Terminal: terminal, ExtraWritable: extraRW, Shareable: shareable && !r.noZygote, NetworkHosts: r.netHosts, NetworkAsk: r.askNetwork}
	cmd, rep, err := b.Wrap(req)
	if err != nil {
		return sandbox.Command{}, SandboxReport{}, nil, fmt.Errorf("subprocess: sandbox (%s): %w", b.Name(), err)
	}
	return cmd, rep, sandbox.NewGuard(req, cmd.ReadOnly), nil
}

package subprocess

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/dshgo/harness/services/subprocess/sandbox"
)

// observeInterval is how often WaitForExit polls the managed range (dsh: 15 ms).
const observeInterval = 15 * time.Millisecond

// Outcome is how the direct child ended: exactly one of ExitCode (normal
// exit) or Signal (killed by a signal, e.g. "SIGTERM") is set. It carries no
// timeout classification: the caller owns its deadline and knows why it
// cancelled.
type Outcome struct {
	ExitCode *int   `json:"exitCode"`
	Signal   string `json:"signal,omitempty"`
}

// String renders "exit 3" or "signal SIGKILL".
func (o Outcome) String() string {
	if o.ExitCode != nil {
		return fmt.Sprintf("exit %d", *o.ExitCode)
	}
	return "signal " + o.Signal
}

// Collected holds the collect-mode streams of a handle; a field is nil
// unless that stream was spawned in collect mode.
type Collected struct {
	Stdout *CollectedOutput
	Stderr *CollectedOutput
}

// Handle is one spawned child and its managed range (its process group, or
// its cgroup leaf when the runtime has cgroup isolation).
//
// Lifecycle: Done closes when the direct child has exited and its collected
// pipes are drained, or at most Grace after the exit when escaped
// descendants still hold them: what the pipes hold then (up to 1 MiB per
// stream) is still collected, later output is lost, by design.
// Descendants may outlive Done; WaitForExit watches the whole range, and
// Terminate signals it. The handle stays owned by the runtime (and killable
// through Close) until the range is observed empty.
type Handle struct {
	rt      *Runtime
	cmd     *exec.Cmd
	pid     int
	grace   time.Duration
	rng     managedRange
	stopCtx func() bool
	// zproc is the command when it runs in a shared sandbox (a bwrap
	// zygote started it; cmd was never started).
	zproc *sandbox.ZygoteProcess

	stdin     io.WriteCloser
	stdout    io.ReadCloser
	stderr    io.ReadCloser
	control   net.Conn
	collected Collected

	pump pump // collected streams and StdinData, run by wait

	sandbox SandboxReport
	// guard puts back the protected paths the command changed; it runs
	// once, when the range is first observed empty (markGone), before
	// gone is set, so whoever sees gone sees protected.
	guard     *sandbox.Guard
	guardOnce sync.Once
	protected []ProtectedChange
	// netLog is the network proxy's record (nil unless the network is
	// proxied).
	netLog *sandbox.NetworkLog

	done    chan struct{}
	outcome Outcome
	waitErr error

	mu        sync.Mutex
	gone      bool
	escalator *time.Timer
}

// Spawn starts a child as spec describes (reference A3–A9). Every
// validation error (ErrInvalidSpec), an already-done Spec.Context, an
// unresolvable Argv[0] (*ExecutableNotFoundError) and an exec-time failure
// such as a missing Dir are returned here, before or instead of a running
// process; Done then never needs waiting. The child runs in a new session
// (Setsid: no controlling terminal, pgid = pid), with a fresh environment
// built from the scrubbed parent environment plus spec.Env minus
// spec.UnsetEnv.
func (r *Runtime) Spawn(spec Spec) (*Handle, error) {
	h, err := r.spawn(spec)
	if err != nil {
		return nil, err
	}
	go h.wait()
	return h, nil
}

// spawn is Spawn without starting the wait goroutine: the caller must run
// h.wait exactly once (Run does so on its own goroutine). It runs the steps
// of a [launch] in order; the first that fails undoes what the earlier ones
// wired (launch.abort) and its error is returned.
func (r *Runtime) spawn(spec Spec) (*Handle, error) {
	l, err := r.newLaunch(spec)
	if err != nil {
		return nil, err
	}
	for _, step := range []func() error{l.wireStdin, l.wireOutputs, l.wireControl, l.joinCgroup, l.start} {
		if err := step(); err != nil {
			l.abort()
			return nil, err
		}
	}
	return l.h, nil
}

// launch is a child being wired: the handle and command so far, and what
// must be undone if a later step fails.
type launch struct {
	r         *Runtime
	spec      Spec
	h         *Handle
	cmd       *exec.Cmd
	wrapped   sandbox.Command
	childEnds []io.Closer // closed in the parent after Start (or on failure)
	cg        cgroupRange // the cgroup leaf until the handle owns it
	cgFD      int         // its directory descriptor (valid with cg)
}

// newLaunch validates spec and builds the command: the environment, the
// resolved executable and the sandbox wrapping. Nothing is open yet.
func (r *Runtime) newLaunch(spec Spec) (*launch, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	ctx, env, err := r.prepare(spec.Context, spec.Env, spec.UnsetEnv)
	if err != nil {
		return nil, err
	}
	if spec.Control {
		env = append(env, ControlEnv+"=3")
	}
	path, err := resolveExecutable(ctx, spec.Argv[0], env)
	if err != nil {
		return nil, err
	}
	wrapped, rep, guard, err := r.wrapSandbox(ctx, spec.Sandbox, spec.Dir, path, spec.Argv, env, false, nil, r.cg != nil)
	if err != nil {
		return nil, err
	}
	h := &Handle{rt: r, grace: spec.Grace, done: make(chan struct{}), sandbox: rep, guard: guard, netLog: wrapped.Network}
	h.cmd = &exec.Cmd{Path: wrapped.Path, Args: wrapped.Args, Dir: spec.Dir, Env: wrapped.Env,
		SysProcAttr: commandSysProcAttr()}
	return &launch{r: r, spec: spec, h: h, cmd: h.cmd, wrapped: wrapped}, nil
}

// abort undoes the wiring of a launch that failed: both ends of every
// pipe and the cgroup leaf.
func (l *launch) abort() {
	closeAll(l.childEnds...)
	l.h.closeParentEnds()
	l.cg.release()
}

// wireStdin connects the child's stdin (Spec.Stdin).
func (l *launch) wireStdin() error {
	switch l.spec.Stdin.Mode {
	case StdinIgnore:
		l.cmd.Stdin = l.r.devNull
	case StdinPipe:
		parent, child, err := newPipe(false)
		if err != nil {
			return fmt.Errorf("subprocess: stdin pipe: %w", err)
		}
		l.cmd.Stdin, l.h.stdin = child, parent
		l.childEnds = append(l.childEnds, child)
	case StdinData:
		parent, child, err := newPumpPipe(false)
		if err != nil {
			return fmt.Errorf("subprocess: stdin pipe: %w", err)
		}
		l.h.pump.add(pumpStream{fd: parent, in: l.spec.Stdin.Data})
		cf := os.NewFile(uintptr(child), "|0")
		l.cmd.Stdin = cf
		l.childEnds = append(l.childEnds, cf)
	}
	return nil
}

// wireOutputs connects the child's stdout and stderr (Spec.Stdout,
// Spec.Stderr).
func (l *launch) wireOutputs() error {
	for _, s := range []struct {
		label string
		o     Output
		dst   *io.Writer
		pipe  *io.ReadCloser
		coll  **CollectedOutput
		self  *os.File
	}{
		{"stdout", l.spec.Stdout, &l.cmd.Stdout, &l.h.stdout, &l.h.collected.Stdout, os.Stdout},
		{"stderr", l.spec.Stderr, &l.cmd.Stderr, &l.h.stderr, &l.h.collected.Stderr, os.Stderr},
	} {
		switch s.o.Mode {
		case OutputInherit:
			*s.dst = s.self
		case OutputPipe:
			parent, child, err := newPipe(true)
			if err != nil {
				return fmt.Errorf("subprocess: %s pipe: %w", s.label, err)
			}
			*s.dst, *s.pipe = child, parent
			l.childEnds = append(l.childEnds, child)
		case OutputCollect:
			parent, child, err := newPumpPipe(true)
			if err != nil {
				return fmt.Errorf("subprocess: %s pipe: %w", s.label, err)
			}
			var spillMax int64
			if s.o.Spill != nil {
				spillMax = s.o.Spill.MaxBytes
			}
			c := newCollectedOutput(s.label, s.o.MaxBytes, spillMax, l.r.openSpill)
			*s.coll = c
			l.h.pump.add(pumpStream{fd: parent, out: c})
			cf := os.NewFile(uintptr(child), "|1")
			*s.dst = cf
			l.childEnds = append(l.childEnds, cf)
		}
	}
	return nil
}

// wireControl opens the control channel (Spec.Control) as the child's fd 3.
func (l *launch) wireControl() error {
	if !l.spec.Control {
		return nil
	}
	parent, child, err := socketpair()
	if err != nil {
		return fmt.Errorf("subprocess: control channel: %w", err)
	}
	l.h.control = parent
	l.cmd.ExtraFiles = []*os.File{child}
	l.childEnds = append(l.childEnds, child)
	return nil
}

// joinCgroup makes the child start in a new cgroup leaf of the runtime's
// managed cgroup, when there is one.
func (l *launch) joinCgroup() error {
	if l.r.cg == nil {
		return nil
	}
	rng, fd, err := l.r.cg.leaf(l.r.seq.Add(1))
	if err != nil {
		return err
	}
	l.cg, l.cgFD = rng, fd
	startInCgroup(l.cmd.SysProcAttr, fd)
	return nil
}

// start tracks the handle and starts the child; on success the handle owns
// the process's range (its cgroup leaf or process group) and the parent's
// copies of the child's ends are closed.
func (l *launch) start() error {
	r, h, spec := l.r, l.h, l.spec
	if err := r.track(h); err != nil {
		return err
	}
	wd := r.ensureWatchdog()
	// Hold h.mu until the range is known: a concurrent Terminate (from
	// Runtime.Close) must not observe a half-started handle.
	h.mu.Lock()
	fail := func(err error) error {
		h.mu.Unlock()
		r.untrack(h)
		r.wg.Done()
		h.sealCollected()
		return startError(spec, err)
	}
	if err := l.launch(); err != nil {
		return fail(err)
	}
	closeAll(l.childEnds...)
	if r.cg != nil {
		h.rng, l.cg = l.cg, cgroupRange{}
	} else {
		// On Windows this puts the (suspended) child in its job object
		// and lets it run; a failure there has killed and reaped it.
		rng, err := newProcessRange(l.cmd, h.pid, wd)
		if err != nil {
			return fail(err)
		}
		h.rng = rng
	}
	if spec.Context != nil {
		// Under h.mu: an already-done context runs Terminate at once on
		// another goroutine, and markGone reads stopCtx.
		h.stopCtx = context.AfterFunc(spec.Context, h.Terminate)
	}
	h.mu.Unlock()
	return nil
}

// launch starts the child and sets h.pid: exec'd by this process, or by
// the shared sandbox (zygote) of its policy, into the same cgroup leaf.
func (l *launch) launch() error {
	z := l.wrapped.Zygote
	if z == nil {
		if err := l.wrapped.Launch(l.cmd.Start); err != nil {
			return err
		}
		l.h.pid = l.cmd.Process.Pid
		return nil
	}
	if l.r.cg == nil {
		return errors.New("subprocess: shared sandbox without a cgroup leaf") // wrapSandbox never asks for one
	}
	files := []*os.File{}
	for _, s := range []any{l.cmd.Stdin, l.cmd.Stdout, l.cmd.Stderr} {
		f, ok := s.(*os.File)
		if !ok {
			return fmt.Errorf("subprocess: shared sandbox: stdio %T is not a file", s)
		}
		files = append(files, f)
	}
	files = append(files, l.cmd.ExtraFiles...)
	p, err := z.Spawn(sandbox.ZygoteSpawn{Files: files, CgroupFD: l.cgFD})
	if err != nil {
		return err
	}
	l.h.zproc, l.h.pid = p, p.Pid
	return nil
}

// startError explains a failed start; fork/exec reports a bad Dir as if
// the program were missing.
func startError(spec Spec, err error) error {
	if st, serr := os.Stat(spec.Dir); serr != nil {
		return fmt.Errorf("subprocess: start %s: working directory: %w", spec.Argv[0], serr)
	} else if !st.IsDir() {
		return fmt.Errorf("subprocess: start %s: working directory %s: not a directory", spec.Argv[0], spec.Dir)
	}
	return fmt.Errorf("subprocess: start %s: %w", spec.Argv[0], err)
}

// newPipe is newPumpPipe for a caller-owned end (StdinPipe, OutputPipe):
// the parent end is an *os.File on the runtime poller (deadlines work and
// Close interrupts a pending Read or Write).
func newPipe(readParent bool) (parent, child *os.File, err error) {
	p, c, err := newPumpPipe(readParent)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(p), "|0"), os.NewFile(uintptr(c), "|1"), nil
}

// wait settles the handle: it runs for the life of the direct child.
func (h *Handle) wait() {
	defer h.rt.wg.Done()
	pidfd := -1
	if h.zproc != nil {
		pidfd = h.zproc.PidFD
	}
	h.pump.run(h.pid, pidfd, h.grace)
	h.noteLeaderExit()
	if h.zproc != nil {
		ws, err := h.zproc.Wait()
		h.sealCollected()
		if err != nil {
			h.rt.log.Warn("subprocess: sandboxed command ended with its shared sandbox", "pid", h.pid, "err", err)
		}
		h.outcome = outcomeOfStatus(ws)
		h.settle()
		return
	}
	err := h.cmd.Wait()
	h.sealCollected()
	ps := h.cmd.ProcessState
	if ps == nil {
		h.waitErr = fmt.Errorf("subprocess: wait pid %d: %w", h.pid, err)
	} else {
		h.outcome = outcomeOf(ps)
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			h.rt.log.Debug("subprocess: wait", "pid", h.pid, "err", err)
		}
	}
	h.settle()
}

// settle closes Done once the direct child was reaped.
func (h *Handle) settle() {
	// Probe the range before Done closes, so a caller woken by Done (Run)
	// usually finds it settled without a probe of its own.
	if !h.isGone() {
		if alive, err := h.rng.alive(); err == nil && !alive {
			h.markGone()
		}
	}
	close(h.done)
	if h.isGone() {
		h.rt.untrack(h) // markGone untracks only once Done is closed
	}
}

func (h *Handle) sealCollected() {
	for _, c := range []*CollectedOutput{h.collected.Stdout, h.collected.Stderr} {
		if c != nil {
			c.seal()
		}
	}
}

func (h *Handle) closeParentEnds() {
	h.pump.closeAll()
	if h.stdin != nil {
		_ = h.stdin.Close()
	}
	if h.stdout != nil {
		_ = h.stdout.Close()
	}
	if h.stderr != nil {
		_ = h.stderr.Close()
	}
	h.closeControl()
}

func (h *Handle) closeControl() {
	if h.control != nil {
		_ = h.control.Close()
	}
}

// markGone records the first confirmed absence of the range. It is
// permanent: no later probe or signal touches the (possibly reused) pgid.
func (h *Handle) markGone() {
	h.guardOnce.Do(h.checkProtected)
	h.mu.Lock()
	first := !h.gone
	h.gone = true
	if h.escalator != nil {
		h.escalator.Stop()
	}
	stop := h.stopCtx
	h.mu.Unlock()
	if !first {
		return
	}
	if stop != nil {
		stop()
	}
	h.rng.release()
	select {
	case <-h.done:
		h.rt.untrack(h)
	default:
	}
}

// checkProtected runs the guard (nothing unless sandboxed in
// workspace-write mode) and logs what it undid.
func (h *Handle) checkProtected() {
	h.protected = h.guard.Check()
	for _, c := range h.protected {
		h.rt.log.Warn("subprocess: "+c.String(), "pid", h.pid)
	}
}

// Protected lists the protected paths (sandbox.ProtectedPaths in the
// workspace and writable roots) the sandboxed command created, changed or
// deleted, each undone (the command's version kept beside it as
// NAME.rejected-UNIXTS). It is known once the range was observed empty
// (WaitForExit returned true; Run reports it in Result.Protected); before
// that, and for commands outside the sandbox or in read-only mode, it is
// nil.
func (h *Handle) Protected() []ProtectedChange {
	if !h.isGone() {
		return nil
	}
	return h.protected
}

// NetworkRefused lists the requests the sandbox's network proxy refused
// while the command ran, one message per host and port, each naming the
// host and the rule to add (netproxy.RefusalMessage). Nil unless the
// sandbox's network is proxied. The proxy serves every command of the same
// network policy: one running at the same time may have made some of them.
func (h *Handle) NetworkRefused() []string {
	return h.netLog.Refused()
}

func (h *Handle) isGone() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.gone
}

// Pid is the direct child's pid (also its pgid and session id). In a bwrap
// sandbox of its own that is bwrap itself, and the program runs as its
// child in a private PID namespace; in a shared sandbox (report Shared) it
// is the program, as this process sees it.
func (h *Handle) Pid() int { return h.pid }

// Sandbox reports what the sandbox enforces for this child: the backend
// ("bwrap", "landlock", or "none" when it runs unsandboxed), full, partial
// or none, and why.
func (h *Handle) Sandbox() SandboxReport { return h.sandbox }

// Stdin is the caller-owned write end in StdinPipe mode, else nil. Close it
// to send EOF.
func (h *Handle) Stdin() io.WriteCloser { return h.stdin }

// Stdout is the raw read end in OutputPipe mode, else nil. The caller must
// drain and close it.
func (h *Handle) Stdout() io.ReadCloser { return h.stdout }

// Stderr is the raw read end in OutputPipe mode, else nil.
func (h *Handle) Stderr() io.ReadCloser { return h.stderr }

// Control is the parent end of the control channel when Spec.Control was
// set, else nil. The caller owns framing and closing; Close of the runtime
// closes an endpoint still open.
func (h *Handle) Control() net.Conn { return h.control }

// Collected returns the collect-mode streams.
func (h *Handle) Collected() Collected { return h.collected }

// Done is closed once the direct child settled (see Handle).
func (h *Handle) Done() <-chan struct{} { return h.done }

// Outcome returns the exit facts once Done is closed; before that it
// returns ErrNotSettled. An error after Done means the wait itself failed.
func (h *Handle) Outcome() (Outcome, error) {
	select {
	case <-h.done:
		return h.outcome, h.waitErr
	default:
		return Outcome{}, ErrNotSettled
	}
}

// ErrNotSettled is returned by Outcome before Done.
var ErrNotSettled = errors.New("subprocess: process has not settled")

// Wait blocks until Done or ctx ends and returns the outcome (or
// context.Cause(ctx)). It does not terminate anything.
func (h *Handle) Wait(ctx context.Context) (Outcome, error) {
	select {
	case <-h.done:
		return h.outcome, h.waitErr
	case <-ctx.Done():
		return Outcome{}, context.Cause(ctx)
	}
}

// Terminate is the only termination verb: SIGTERM to every member of the
// managed range, then SIGKILL after Grace if any member still runs. It is
// idempotent (a second call does not restart the grace), never blocks, never
// fails, and is a no-op once the range was observed empty. The SIGKILL
// escalation outlives the direct child, so a TERM-ignoring descendant is
// killed too. Spec.Context calls it when done.
func (h *Handle) Terminate() {
	h.mu.Lock()
	if h.gone || h.escalator != nil {
		h.mu.Unlock()
		return
	}
	if alive, err := h.rng.alive(); err == nil && !alive {
		h.mu.Unlock()
		h.markGone()
		return
	}
	defer h.mu.Unlock()
	h.rng.signal(syscall.SIGTERM)
	h.escalator = time.AfterFunc(h.grace, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.gone {
			return
		}
		if alive, err := h.rng.alive(); err != nil || alive {
			h.rng.signal(syscall.SIGKILL)
		}
	})
}

// kill SIGKILLs the range at once (host exit, failed teardown).
func (h *Handle) kill() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.gone {
		h.rng.signal(syscall.SIGKILL)
	}
}

// WaitForExit blocks until no member of the managed range is alive
// (zombies count as gone) and returns true, or returns false when ctx ends
// first. It returns an error when the range can no longer be observed.
// Polls every 15 ms.
func (h *Handle) WaitForExit(ctx context.Context) (bool, error) {
	var tick *time.Ticker
	for {
		h.mu.Lock()
		gone := h.gone
		h.mu.Unlock()
		if gone {
			return true, nil
		}
		alive, err := h.rng.alive()
		if err != nil {
			if h.isGone() { // released concurrently
				return true, nil
			}
			return false, err
		}
		if !alive {
			h.markGone()
			return true, nil
		}
		if tick == nil {
			tick = time.NewTicker(observeInterval)
			defer tick.Stop()
		}
		select {
		case <-ctx.Done():
			return false, nil
		case <-tick.C:
		}
	}
}

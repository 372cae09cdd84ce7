//go:build unix

package subprocess

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
	"github.com/dshgo/harness/services/subprocess/sandbox"
	"golang.org/x/sys/unix"
)

// terminalQueue bounds queued, unread terminal output (bytes) before
// backpressure stops reading the PTY.
const terminalQueue = 1 << 20

// Terminal is one program running on a PTY, in its own session (it is the
// session leader and the PTY is its controlling terminal).
//
// Output is the PTY's byte stream in delivery order. It ends (io.EOF) once
// the program exited and every byte it wrote was queued; a background job
// still holding the PTY does not keep it open. Done closes after that, so
// when Done is closed the whole transcript is readable.
type Terminal struct {
	rt      *Runtime
	cmd     *exec.Cmd
	pid     int
	master  *os.File // non-blocking, registered with the poller
	ptsName string
	grace   time.Duration
	rng     managedRange
	out     *outBuf
	hooks   *shellHooks // nil without shell integration
	sandbox SandboxReport
	zproc   *sandbox.ZygoteProcess // the program, when a shared sandbox started it
	// guard puts back protected paths once the program was reaped; its
	// findings (protected) are read after Done.
	guard     *sandbox.Guard
	protected []ProtectedChange
	netLog    *sandbox.NetworkLog // nil unless the network is proxied

	exited     chan struct{} // program reaped
	readerDone chan struct{}
	done       chan struct{} // exited and output complete
	outcome    Outcome
	waitErr    error

	writeMu sync.Mutex

	mu          sync.Mutex
	termDone    bool
	termRunning chan struct{} // closed when an in-flight Terminate ends
	termErr     error
	invalidated bool // a write or signal since the last hook record
	lastHook    string
	lastState   ActivityState
	revision    uint64
}

// SpawnTerminal starts spec.Argv on a new PTY of spec.Cols×spec.Rows with
// TERM=spec.TerminalType (reference A11, E4). Validation errors, a done
// spec.Context, an unresolvable program and exec failures are returned here.
func (r *Runtime) SpawnTerminal(spec TerminalSpec) (*Terminal, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	ctx, env, err := r.prepare(spec.Context, spec.Env, spec.UnsetEnv)
	if err != nil {
		return nil, err
	}
	env = append(slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "TERM=") }), "TERM="+spec.TerminalType)
	path, err := resolveExecutable(ctx, spec.Argv[0], env)
	if err != nil {
		return nil, err
	}
	t := &Terminal{rt: r, grace: spec.Grace, out: newOutBuf(terminalQueue),
		exited: make(chan struct{}), readerDone: make(chan struct{}), done: make(chan struct{}), lastState: ActivityUnknown}
	argv := spec.Argv
	if spec.ShellActivity && isInteractiveBash(argv) {
		if t.hooks, err = newShellHooks(); err != nil {
			return nil, err
		}
		argv = []string{argv[0], "--rcfile", t.hooks.rcfile, "-i"}
	}
	var extraRW []string
	if t.hooks != nil {
		extraRW = []string{t.hooks.dir}
	}
	wrapped, rep, guard, err := r.wrapSandbox(ctx, spec.Sandbox, spec.Dir, path, argv, env, true, extraRW, r.cg != nil)
	if err != nil {
		t.hooks.remove()
		return nil, err
	}
	t.sandbox = rep
	t.guard = guard
	t.netLog = wrapped.Network
	t.cmd = &exec.Cmd{Path: wrapped.Path, Args: wrapped.Args, Dir: spec.Dir, Env: wrapped.Env}
	attrs := &syscall.SysProcAttr{Setsid: true, Setctty: true}
	var cgRange cgroupRange
	cgFD := -1
	if r.cg != nil {
		if cgRange, cgFD, err = r.cg.leaf(r.seq.Add(1)); err != nil {
			t.hooks.remove()
			return nil, err
		}
		startInCgroup(attrs, cgFD)
	}
	if err := r.trackTerminal(t); err != nil {
		cgRange.release()
		t.hooks.remove()
		return nil, err
	}
	wd := r.ensureWatchdog()
	size := &pty.Winsize{Rows: uint16(spec.Rows), Cols: uint16(spec.Cols)}
	var master *os.File
	if wrapped.Zygote != nil {
		master, err = t.startShared(wrapped.Zygote, size, cgFD)
	} else {
		err = wrapped.Launch(func() (err error) {
			master, err = pty.StartWithAttrs(t.cmd, size, attrs)
			return err
		})
		if err == nil {
			t.pid = t.cmd.Process.Pid
		}
	}
	if err != nil {
		r.untrackTerminal(t)
		r.wg.Done()
		cgRange.release()
		t.hooks.remove()
		return nil, fmt.Errorf("subprocess: start terminal %s: %w", spec.Argv[0], err)
	}
	if r.cg != nil {
		t.rng = cgRange
	} else {
		t.rng = newSessionRange(t.pid, wd)
	}
	// creack/pty's Open and Setsize called Fd(), which left the master in
	// blocking mode: deadlines would not work and Close would not unblock a
	// Read. Re-open it as a non-blocking, poller-registered file.
	t.master, err = pollable(master)
	if err == nil {
		t.ptsName, err = ptsName(t.master)
	}
	if err != nil {
		_ = unix.Kill(-t.pid, unix.SIGKILL)
		go t.run() // reaps the program; the reader ends at once
		return nil, fmt.Errorf("subprocess: terminal master: %w", err)
	}
	go t.run()
	return t, nil
}

// startShared opens a PTY and has the shared sandbox z start the program
// on it (session leader, controlling terminal) in the cgroup leaf cgFD.
func (t *Terminal) startShared(z *sandbox.ZygoteLaunch, size *pty.Winsize, cgFD int) (*os.File, error) {
	master, slave, err := pty.Open()
	if err != nil {
		return nil, err
	}
	defer slave.Close()
	if err := pty.Setsize(master, size); err != nil {
		_ = master.Close()
		return nil, err
	}
	p, err := z.Spawn(sandbox.ZygoteSpawn{Files: []*os.File{slave, slave, slave}, Terminal: true, CgroupFD: cgFD})
	if err != nil {
		_ = master.Close()
		return nil, err
	}
	t.zproc, t.pid = p, p.Pid
	return master, nil
}

func pollable(f *os.File) (*os.File, error) {
	defer f.Close()
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(fd)
	if err := unix.SetNonblock(fd, true); err != nil {
		_ = unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), "/dev/ptmx"), nil
}

func control(f *os.File, fn func(fd int)) error {
	if f == nil {
		return os.ErrClosed
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	return rc.Control(func(fd uintptr) { fn(int(fd)) })
}

// run owns the terminal's goroutines: it reads the PTY, reaps the program,
// ends the output after the last queued byte, then closes Done.
func (t *Terminal) run() {
	defer t.rt.wg.Done()
	go t.read()
	if t.zproc != nil {
		ws, err := t.zproc.Wait()
		if err != nil {
			t.rt.log.Warn("subprocess: sandboxed terminal ended with its shared sandbox", "pid", t.pid, "err", err)
		}
		t.outcome = outcomeOfStatus(ws)
	} else {
		err := t.cmd.Wait()
		if ps := t.cmd.ProcessState; ps != nil {
			t.outcome = outcomeOf(ps)
		} else {
			t.waitErr = fmt.Errorf("subprocess: wait terminal %d: %w", t.pid, err)
		}
	}
	t.protected = t.guard.Check()
	for _, c := range t.protected {
		t.rt.log.Warn("subprocess: "+c.String(), "pid", t.pid)
	}
	close(t.exited)
	t.out.setFree()
	if t.master != nil {
		_ = t.master.SetReadDeadline(time.Now()) // wake the reader: drain what is queued and stop
	}
	<-t.readerDone
	t.out.end()
	if t.master != nil {
		_ = t.master.Close()
	}
	close(t.done)
}

func (t *Terminal) read() {
	defer close(t.readerDone)
	if t.master == nil {
		return
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := t.master.Read(buf)
		if n > 0 {
			t.out.push(buf[:n], t.exited)
		}
		if err == nil {
			continue
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			select {
			case <-t.exited:
				t.drain(buf)
				return
			default:
				_ = t.master.SetReadDeadline(time.Time{})
				continue
			}
		}
		return // EIO: the last holder of the PTY is gone (the normal end); or closed
	}
}

// drain reads what is queued on the master right now, without waiting
// (bounded, in case a background job keeps writing).
func (t *Terminal) drain(buf []byte) {
	_ = control(t.master, func(fd int) {
		for total := 0; total < 4*terminalQueue; {
			n, err := unix.Read(fd, buf)
			if n <= 0 || err != nil {
				return
			}
			t.out.push(buf[:n], nil)
			total += n
		}
	})
}

// Pid is the program's pid (also its session and process-group id). In a
// bwrap sandbox of its own it is the pid of bwrap, whose child in its own
// PID namespace runs the program; in a shared sandbox (report Shared) it is
// the program, as this process sees it.
func (t *Terminal) Pid() int { return t.pid }

// Sandbox reports what the sandbox enforces for this terminal (backend
// "none", enforcement none when it runs unsandboxed).
func (t *Terminal) Sandbox() SandboxReport { return t.sandbox }

// Protected lists the protected paths (sandbox.ProtectedPaths) the
// sandboxed terminal created, changed or deleted, each undone once its
// program exited; nil before Done.
func (t *Terminal) Protected() []ProtectedChange {
	select {
	case <-t.done:
		return t.protected
	default:
		return nil
	}
}

// NetworkRefused lists the requests the sandbox's network proxy refused
// since the terminal started (see Handle.NetworkRefused).
func (t *Terminal) NetworkRefused() []string { return t.netLog.Refused() }

// Read reads terminal output in order; it returns io.EOF after the last
// byte once the program exited, and context.Cause(ctx) if ctx ends first.
func (t *Terminal) Read(ctx context.Context, p []byte) (int, error) { return t.out.read(ctx, p) }

// Output is Read without a context, as an io.Reader (it still ends with
// io.EOF when the program exited, or after Terminate).
func (t *Terminal) Output() io.Reader { return outputReader{t} }

type outputReader struct{ t *Terminal }

func (o outputReader) Read(p []byte) (int, error) { return o.t.out.read(context.Background(), p) }

// Done is closed once the program exited and its output is complete.
func (t *Terminal) Done() <-chan struct{} { return t.done }

// Wait blocks until Done or ctx ends, returning the outcome.
func (t *Terminal) Wait(ctx context.Context) (Outcome, error) {
	select {
	case <-t.done:
		return t.outcome, t.waitErr
	case <-ctx.Done():
		return Outcome{}, context.Cause(ctx)
	}
}

// Outcome returns the exit facts after Done, else ErrNotSettled.
func (t *Terminal) Outcome() (Outcome, error) {
	select {
	case <-t.done:
		return t.outcome, t.waitErr
	default:
		return Outcome{}, ErrNotSettled
	}
}

func (t *Terminal) hasExited() bool {
	select {
	case <-t.exited:
		return true
	default:
		return false
	}
}

// Write sends data to the program verbatim (no newline conversion). It
// fails with ErrTerminalExited after exit, and with context.Cause(ctx) when
// ctx ends while the PTY is full. It invalidates activity evidence.
func (t *Terminal) Write(ctx context.Context, data string) error {
	if t.hasExited() {
		return ErrTerminalExited
	}
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	t.invalidate()
	stop := context.AfterFunc(ctx, func() { _ = t.master.SetWriteDeadline(time.Now()) })
	_, err := io.WriteString(t.master, data)
	if !stop() {
		_ = t.master.SetWriteDeadline(time.Time{})
		if err != nil {
			return context.Cause(ctx)
		}
	}
	if err != nil && (t.hasExited() || errors.Is(err, os.ErrClosed)) {
		return ErrTerminalExited
	}
	return err
}

// Resize sets the PTY size (positive cells); the kernel sends SIGWINCH to
// the foreground process group. ErrTerminalExited after exit.
func (t *Terminal) Resize(ctx context.Context, cols, rows int) error {
	if cols <= 0 || rows <= 0 || cols > 0xffff || rows > 0xffff {
		return fmt.Errorf("subprocess: resize: cols and rows must be positive, got %dx%d", cols, rows)
	}
	if t.hasExited() {
		return ErrTerminalExited
	}
	var ierr error
	err := control(t.master, func(fd int) {
		ierr = unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)})
	})
	if errors.Is(err, os.ErrClosed) {
		return ErrTerminalExited
	}
	return errors.Join(err, ierr)
}

// InspectForeground reads the foreground process group of the PTY
// (TIOCGPGRP on the master). ErrTerminalExited after exit.
func (t *Terminal) InspectForeground(ctx context.Context) (*Foreground, error) {
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	if t.hasExited() {
		return nil, ErrTerminalExited
	}
	pgid, err := t.foregroundPgid()
	if err != nil {
		return nil, err
	}
	fg := &Foreground{ProcessGroupID: pgid, Command: commandOf(pgid)}
	for _, p := range liveMembers(func(p procStat) bool { return p.pgrp == pgid }) {
		if readingTTY(p.pid, t.ptsName) {
			fg.InputWaiting = true
			break
		}
	}
	return fg, nil
}

func (t *Terminal) foregroundPgid() (int, error) {
	var pgid int
	var ierr error
	err := control(t.master, func(fd int) { pgid, ierr = unix.IoctlGetInt(fd, unix.TIOCGPGRP) })
	if errors.Is(err, os.ErrClosed) {
		return 0, ErrTerminalExited
	}
	if err = errors.Join(err, ierr); err != nil || pgid <= 0 {
		return 0, fmt.Errorf("cannot resolve foreground process group for terminal %d: %w", t.pid, errors.Join(err, errors.New("no foreground group")))
	}
	return pgid, nil
}

func commandOf(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err == nil && len(b) > 0 {
		return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
	}
	b, _ = os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	return strings.TrimSpace(string(b))
}

// waitSyscalls are the numbers of read(2), select(2)/pselect6(2) and
// poll(2)/ppoll(2) on this architecture.
var waitSyscalls = map[string]struct{ read, sel, psel, poll, ppoll string }{
	"amd64": {read: "0", sel: "23", psel: "270", poll: "7", ppoll: "271"},
	"arm64": {read: "63", sel: "-", psel: "72", poll: "-", ppoll: "73"},
}[runtime.GOARCH]

// readingTTY reports whether a thread of pid is provably blocked waiting to
// read fd 0, and fd 0 is the terminal's PTY: read(0), select/pselect with
// fd 0 in the read set, or poll/ppoll with POLLIN on fd 0 (the sets are read
// from /proc/<pid>/mem, which needs ptrace access: false otherwise).
func readingTTY(pid int, pts string) bool {
	if waitSyscalls.read == "" {
		return false
	}
	base := "/proc/" + strconv.Itoa(pid)
	if l, err := os.Readlink(base + "/fd/0"); err != nil || l != pts {
		return false
	}
	tasks, _ := os.ReadDir(base + "/task")
	for _, task := range tasks {
		b, err := os.ReadFile(base + "/task/" + task.Name() + "/syscall")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) < 3 {
			continue
		}
		arg := func(i int) uint64 { v, _ := strconv.ParseUint(strings.TrimPrefix(f[i], "0x"), 16, 64); return v }
		switch f[0] {
		case waitSyscalls.read:
			if arg(1) == 0 {
				return true
			}
		case waitSyscalls.sel, waitSyscalls.psel:
			if arg(1) > 0 && arg(2) != 0 {
				if set, ok := peek(base, arg(2), 1); ok && set[0]&1 == 1 {
					return true
				}
			}
		case waitSyscalls.poll, waitSyscalls.ppoll:
			n := min(arg(2), 64)
			if fds, ok := peek(base, arg(1), int(n)*8); ok {
				for i := 0; i+8 <= len(fds); i += 8 {
					fd := int32(binary.NativeEndian.Uint32(fds[i:]))
					events := binary.NativeEndian.Uint16(fds[i+4:])
					if fd == 0 && events&unix.POLLIN != 0 {
						return true
					}
				}
			}
		}
	}
	return false
}

func peek(base string, addr uint64, n int) ([]byte, bool) {
	f, err := os.Open(base + "/mem")
	if err != nil {
		return nil, false
	}
	defer f.Close()
	b := make([]byte, n)
	_, err = f.ReadAt(b, int64(addr))
	return b, err == nil
}

var foregroundSignals = map[string]unix.Signal{
	"SIGINT": unix.SIGINT, "SIGTERM": unix.SIGTERM, "SIGKILL": unix.SIGKILL, "SIGTSTP": unix.SIGTSTP, "SIGHUP": unix.SIGHUP,
}

// SignalForeground sends sig (SIGINT, SIGTERM, SIGKILL, SIGTSTP or SIGHUP)
// to the foreground process group and returns its pgid. SIGKILL is refused
// while the shell itself is in the foreground (terminate the session
// instead). It invalidates activity evidence.
func (t *Terminal) SignalForeground(ctx context.Context, sig string) (int, error) {
	s, ok := foregroundSignals[sig]
	if !ok {
		return 0, fmt.Errorf("subprocess: signal %q is not allowed; use SIGINT, SIGTERM, SIGKILL, SIGTSTP or SIGHUP", sig)
	}
	if err := context.Cause(ctx); err != nil {
		return 0, err
	}
	if t.hasExited() {
		return 0, ErrTerminalExited
	}
	pgid, err := t.foregroundPgid()
	if err != nil {
		return 0, err
	}
	if s == unix.SIGKILL && pgid == t.pid {
		return 0, errors.New("refusing to SIGKILL the terminal shell; terminate the terminal session instead")
	}
	t.invalidate()
	if err := unix.Kill(-pgid, s); err != nil && !errors.Is(err, unix.ESRCH) {
		return pgid, fmt.Errorf("subprocess: signal %s to group %d: %w", sig, pgid, err)
	}
	return pgid, nil
}

// Terminate ends the whole session and waits for it: SIGTERM (and SIGHUP,
// which interactive shells honour) to every member of the range, up to
// Grace for it to empty, then SIGKILL and up to Grace again, then the
// program is reaped and the output completed. Concurrent calls share one
// run; a failed run (survivors, or ctx ended) may be retried. The range is
// the terminal's cgroup leaf, or without cgroups its session plus
// descendants by parent link (setsid escapees are then out of reach).
func (t *Terminal) Terminate(ctx context.Context) error {
	t.mu.Lock()
	if t.termDone {
		t.mu.Unlock()
		return nil
	}
	if ch := t.termRunning; ch != nil {
		t.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.termDone {
			return nil
		}
		return t.termErr
	}
	ch := make(chan struct{})
	t.termRunning = ch
	t.mu.Unlock()

	err := t.terminate(ctx)

	t.mu.Lock()
	t.termRunning = nil
	t.termDone = err == nil
	t.termErr = err
	t.mu.Unlock()
	close(ch)
	return err
}

func (t *Terminal) terminate(ctx context.Context) error {
	t.out.setFree()
	if t.rangeAliveOrErr() {
		t.rng.signal(unix.SIGHUP)
		t.rng.signal(unix.SIGTERM)
		t.rng.signal(unix.SIGCONT)
		if !t.awaitEmpty(ctx, t.grace) {
			t.rng.signal(unix.SIGKILL)
			if !t.awaitEmpty(ctx, t.grace) {
				if err := context.Cause(ctx); err != nil {
					return err
				}
				return fmt.Errorf("terminal cleanup failed; surviving pids: %s", pidList(t.members()))
			}
		}
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	t.rng.release()
	t.hooks.remove()
	t.rt.untrackTerminal(t)
	return nil
}

func (t *Terminal) rangeAliveOrErr() bool {
	alive, err := t.rng.alive()
	return err != nil || alive
}

func (t *Terminal) awaitEmpty(ctx context.Context, d time.Duration) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(observeInterval)
	defer tick.Stop()
	for {
		if alive, err := t.rng.alive(); err == nil && !alive {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			return false
		case <-tick.C:
		}
	}
}

func (t *Terminal) members() []int {
	switch r := t.rng.(type) {
	case cgroupRange:
		return r.members()
	case sessionRange:
		var out []int
		for _, p := range r.members() {
			out = append(out, p.pid)
		}
		return out
	}
	return nil
}

func pidList(pids []int) string {
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, ", ")
}

// kill SIGKILLs the whole range at once (failed teardown).
func (t *Terminal) kill() { t.rng.signal(unix.SIGKILL) }

// sessionRange is the process-group fallback for terminals: the session
// led by the program plus, while the program runs, its descendants by parent
// link. Members are signalled one by one after an identity check, never by
// number alone. A process that now holds the leader's pid with another start
// time means the session ended and its number was reused: the range is then
// gone.
type sessionRange struct {
	sid         int
	leaderStart uint64
	wd          *watchdog // told of the session until release; nil: none
}

// newSessionRange is the session of the just-started leader pid; wd (may
// be nil) learns of it, to kill it should this process die first.
func newSessionRange(pid int, wd *watchdog) sessionRange {
	st, _ := readProcStat(pid)
	wd.announce("+s " + strconv.Itoa(pid) + " " + strconv.FormatUint(st.start, 10))
	return sessionRange{sid: pid, leaderStart: st.start, wd: wd}
}

// members lists the live processes of the range.
func (r sessionRange) members() []procStat {
	leader, ok := readProcStat(r.sid)
	if ok && leader.start != r.leaderStart {
		return nil // reused number: the session is long gone
	}
	if ok && !leader.gone() {
		return append(descendants(r.sid, r.sid), leader)
	}
	return liveMembers(func(p procStat) bool { return p.session == r.sid })
}

func (r sessionRange) alive() (bool, error) { return len(r.members()) > 0, nil }

func (r sessionRange) signal(sig syscall.Signal) {
	for _, p := range r.members() {
		if sameProcess(p) {
			_ = unix.Kill(p.pid, sig)
		}
	}
}

// release tells the watchdog the session is gone (it was observed empty).
func (r sessionRange) release() { r.wd.announce("-s " + strconv.Itoa(r.sid)) }

func (r *Runtime) trackTerminal(t *Terminal) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	r.terms[t] = struct{}{}
	r.wg.Add(1)
	return nil
}

func (r *Runtime) untrackTerminal(t *Terminal) {
	r.mu.Lock()
	delete(r.terms, t)
	r.mu.Unlock()
}

// TerminalEnvironment reports the platform and default shell (reference
// A12). Check candidates with ResolveExecutable.
func (r *Runtime) TerminalEnvironment(ctx context.Context) (TerminalEnvironment, error) {
	if err := context.Cause(ctx); err != nil {
		return TerminalEnvironment{}, err
	}
	env := TerminalEnvironment{Platform: "posix"}
	if sh, ok := lookupEnv(r.childEnv(nil, nil), "SHELL"); ok && sh != "" {
		env.DefaultShell = sh
		return env, nil
	}
	env.DefaultShell = passwdShell(os.Getuid())
	return env, nil
}

func passwdShell(uid int) string {
	f, err := os.Open("/etc/passwd")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) >= 7 && fields[2] == strconv.Itoa(uid) {
			return fields[6]
		}
	}
	return ""
}

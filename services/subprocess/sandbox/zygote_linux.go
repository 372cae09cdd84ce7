package sandbox

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A zygote is one bwrap sandbox kept running for many commands: bwrap sets
// up its namespaces and mounts once (the costly part of a bwrap run: a
// pivot_root whose lazy unmount waits for an RCU grace period, plus the
// namespace creation), and a small server inside it, a re-exec of the
// current executable (see zygote_server.go), forks and execs each command.
//
// The harness talks to the server over a unix stream socketpair. A frame
// is a 4-byte little-endian length and a JSON body; the descriptors a frame
// carries (SCM_RIGHTS) are attached to its first byte. Requests carry the
// command (absolute path, argv, environment, working directory), its stdio
// and extra descriptors and the directory descriptor of its cgroup leaf;
// the server starts the command with clone3(CLONE_INTO_CGROUP), so the
// caller's cgroup range (kill, liveness, every descendant) works exactly as
// for a command the harness forked itself. Replies: "ready" once, then per
// request "started" (with a pidfd of the command) or an error, and
// "exited" with the wait status.

// zygoteArg is argv[1] of a zygote server; argv[2] is the pool's tag.
const zygoteArg = "harness-sandbox-zygote"

// zygoteEnv marks the environment of a zygote server (value "1"); it is
// the server's whole environment and never reaches a command.
const zygoteEnv = "HARNESS_SANDBOX_ZYGOTE"

// maxZygotes bounds the zygotes a backend keeps: when a new policy needs one
// beyond that, idle zygotes are stopped, least recently used first. Idle
// means no running command and no caller holding it (a lease, from get
// until its spawn request was answered): a zygote is never stopped between
// being handed out and its command starting.
//
// When every zygote is busy, a new one starts beyond the bound rather than
// the caller waiting: a busy zygote may run a command for hours (a server,
// a terminal), so waiting could block a spawn indefinitely or deadlock
// callers that hold one zygote while spawning in another. The surplus is
// bounded by the number of running commands and in-flight spawns (each
// surplus zygote has one at least), and is stopped as soon as it is idle
// (see release and trim), so the pool returns to maxZygotes once idle.
const maxZygotes = 4

// maxFrame bounds one frame (a command line plus environment).
const maxFrame = 64 << 20

// maxFrameFDs bounds the descriptors one frame carries.
const maxFrameFDs = 16

// zygoteStartTimeout bounds a zygote's start (bwrap plus the server's
// "ready").
const zygoteStartTimeout = 30 * time.Second

// zyRequest is a spawn request. Its frame carries NFiles descriptors (the
// command's fds 0..NFiles-1), then the cgroup directory when Cgroup is set.
type zyRequest struct {
	ID uint64 `json:"id"`
	// Ack (with ID only) tells the server the harness has read the pid of
	// command ID: until then the server leaves the exited command
	// unreaped, so that its pidfd still names it.
	Ack      bool     `json:"ack,omitempty"`
	Path     string   `json:"path"`
	Argv     []string `json:"argv"`
	Env      []string `json:"env"`
	Dir      string   `json:"dir"`
	Terminal bool     `json:"terminal,omitempty"`
	NFiles   int      `json:"nfiles"`
	Cgroup   bool     `json:"cgroup,omitempty"`
	// Checks must all hold in the sandbox before the command starts;
	// else the reply is Stale and the zygote is replaced.
	Checks []zyCheck `json:"checks,omitempty"`
}

// zyCheck is one mount the zygote must still have: Path shows the inode
// Dev:Ino (a writable bind, a denied file's mask), or is a read-only tmpfs
// (a denied directory's mask).
type zyCheck struct {
	Path    string `json:"path"`
	Dev     uint64 `json:"dev,omitempty"`
	Ino     uint64 `json:"ino,omitempty"`
	ROTmpfs bool   `json:"roTmpfs,omitempty"`
}

// holds reports whether the check holds in this mount namespace.
func (c zyCheck) holds() bool {
	if c.ROTmpfs {
		var fs unix.Statfs_t
		return unix.Statfs(c.Path, &fs) == nil && fs.Type == unix.TMPFS_MAGIC && fs.Flags&unix.ST_RDONLY != 0
	}
	var st unix.Stat_t
	return c.Ino != 0 && unix.Stat(c.Path, &st) == nil && st.Dev == c.Dev && st.Ino == c.Ino
}

// zyReply is a server reply; a "started" frame carries the command's pidfd.
type zyReply struct {
	ID     uint64 `json:"id,omitempty"`
	Kind   string `json:"kind"` // ready, started, exited
	Err    string `json:"err,omitempty"`
	Stale  bool   `json:"stale,omitempty"`  // started: a check failed, nothing ran
	Status int    `json:"status,omitempty"` // exited: the raw wait status
}

// writeFrame sends one frame with fds attached to its first byte.
func writeFrame(fd int, v any, fds []int) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	buf := make([]byte, 4+len(body))
	binary.LittleEndian.PutUint32(buf, uint32(len(body)))
	copy(buf[4:], body)
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	for len(buf) > 0 {
		n, err := unix.SendmsgN(fd, buf, oob, nil, unix.MSG_NOSIGNAL)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return err
		}
		buf, oob = buf[n:], nil
	}
	return nil
}

// readFrame reads one frame into v and returns the descriptors it carried
// (close-on-exec). io.EOF means the peer closed the socket between frames.
func readFrame(fd int, v any) ([]int, error) {
	var hdr [4]byte
	oob := make([]byte, unix.CmsgSpace(maxFrameFDs*4))
	var fds []int
	got := 0
	for got < len(hdr) {
		n, oobn, _, _, err := unix.Recvmsg(fd, hdr[got:], oob, unix.MSG_CMSG_CLOEXEC)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			closeFDs(fds)
			return nil, err
		}
		if oobn > 0 {
			more, err := parseRights(oob[:oobn])
			fds = append(fds, more...)
			if err != nil {
				closeFDs(fds)
				return nil, err
			}
		}
		if n == 0 {
			closeFDs(fds)
			if got == 0 {
				return nil, io.EOF
			}
			return nil, io.ErrUnexpectedEOF
		}
		got += n
	}
	size := binary.LittleEndian.Uint32(hdr[:])
	if size > maxFrame {
		closeFDs(fds)
		return nil, fmt.Errorf("frame of %d bytes exceeds %d", size, maxFrame)
	}
	body := make([]byte, size)
	for off := 0; off < len(body); {
		n, err := unix.Read(fd, body[off:])
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			closeFDs(fds)
			return nil, err
		}
		if n == 0 {
			closeFDs(fds)
			return nil, io.ErrUnexpectedEOF
		}
		off += n
	}
	if err := json.Unmarshal(body, v); err != nil {
		closeFDs(fds)
		return nil, fmt.Errorf("bad frame: %w", err)
	}
	return fds, nil
}

func parseRights(oob []byte) ([]int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	for _, m := range msgs {
		r, err := unix.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		fds = append(fds, r...)
	}
	return fds, nil
}

func closeFDs(fds []int) {
	for _, f := range fds {
		_ = unix.Close(f)
	}
}

// ZygoteLaunch is a command to start in a shared bwrap sandbox (a zygote)
// instead of a bwrap of its own: see [Command.Zygote].
type ZygoteLaunch struct {
	pool   *zygotePool
	key    string
	args   []string // bwrap and its options, up to (without) --chdir
	checks []zyCheck
	dir    string
	path   string
	argv   []string
	env    []string
	// netfwd is "port socket" of the network proxy the zygote's forwarder
	// serves ("" when the policy's network is not proxied).
	netfwd string
}

// Spawn starts the command in the zygote of its policy, starting that
// zygote first when there is none (or the previous one died). It returns
// once the command runs, or the error that prevented it (start errors
// such as a missing working directory come from the server's fork/exec).
func (l *ZygoteLaunch) Spawn(s ZygoteSpawn) (*ZygoteProcess, error) {
	if len(s.Files) < 3 || len(s.Files) > maxFrameFDs-1 {
		return nil, fmt.Errorf("sandbox zygote: %d files, want 3 to %d", len(s.Files), maxFrameFDs-1)
	}
	for attempt := 0; ; attempt++ {
		z, err := l.pool.get(l) // leased: not stopped until released
		if err != nil {
			return nil, err
		}
		p, err := z.spawn(l, s)
		if !errors.Is(err, errStale) {
			l.pool.release(z)
			return p, err
		}
		// A host path it mounted was replaced: a new zygote mounts the
		// new one. The stale one stops once its last command ended.
		l.pool.retire(z)
		l.pool.release(z)
		if attempt > 0 {
			return nil, fmt.Errorf("sandbox zygote: %w even in a new sandbox (paths changing while commands start?)", err)
		}
	}
}

// errStale is a spawn refused because the zygote's mounts no longer match
// the host.
var errStale = errors.New("mounts of the shared sandbox no longer match the host")

// retire removes z from the pool so that the next spawn starts a new
// zygote; z itself is stopped when idle, else left to its running
// commands (they keep the view they started with) and its lessees, and
// stopped once idle or at Close.
func (p *zygotePool) retire(z *zygote) {
	p.mu.Lock()
	if p.zs[z.key] == z {
		delete(p.zs, z.key)
	}
	p.retireLocked(z)
	p.mu.Unlock()
	z.mu.Lock()
	z.retired = true
	idle := z.idleLocked()
	z.mu.Unlock()
	if idle {
		p.stopAsync(z)
	}
}

// retireLocked keeps z (out of p.zs) for close to stop, and forgets those
// already gone; the caller holds p.mu.
func (p *zygotePool) retireLocked(z *zygote) {
	p.retired = slices.DeleteFunc(p.retired, (*zygote).gone)
	p.retired = append(p.retired, z)
}

// release ends a lease taken by get. An idle zygote is then stopped when
// retired, and the pool trimmed to maxZygotes when it grew beyond.
func (p *zygotePool) release(z *zygote) {
	z.mu.Lock()
	z.leases--
	idle, retired := z.idleLocked(), z.retired
	z.mu.Unlock()
	switch {
	case idle && retired:
		p.stopAsync(z)
	case idle:
		p.trim()
	}
}

// trim stops idle zygotes beyond maxZygotes (surplus started while all
// were busy), least recently used first, in the background.
func (p *zygotePool) trim() {
	p.mu.Lock()
	var evict []*zygote
	if !p.closed {
		evict = p.evictLocked(nil)
	}
	p.mu.Unlock()
	for _, e := range evict {
		p.stopAsync(e)
	}
}

// stopAsync stops z in the background; close waits for it.
func (p *zygotePool) stopAsync(z *zygote) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return // close stops z (it is in p.retired or p.zs) and waits
	}
	p.stopping.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.stopping.Done()
		z.stop()
	}()
}

// ZygoteProcess is a command started in a zygote.
type ZygoteProcess struct {
	// Pid is the command's pid as this process sees it (not the pid
	// inside the sandbox's PID namespace).
	Pid int
	// PidFD refers to the command; it is closed by Wait. The caller may
	// poll it (readable once the command exited) until then.
	PidFD int

	z       *zygote
	id      uint64
	started bool         // a "started" reply arrived (guarded by z.mu)
	start   chan zyReply // "started" or an error
	done    chan struct{}
	status  syscall.WaitStatus
	err     error
}

// Wait blocks until the command exited and returns its wait status. When
// the zygote died first (and with it every command inside), it returns
// once the command is gone, with an error saying so.
func (p *ZygoteProcess) Wait() (syscall.WaitStatus, error) {
	<-p.done
	if p.PidFD >= 0 {
		_ = unix.Close(p.PidFD)
		p.PidFD = -1
	}
	return p.status, p.err
}

// zygotePool holds the zygotes of one backend, one per distinct bwrap
// command line (policy, workspace, the denied and writable paths found,
// and their identities).
type zygotePool struct {
	bwrap string
	tag   string // in every zygote's command line: tests and diagnostics find them by it

	mu       sync.Mutex
	zs       map[string]*zygote
	retired  []*zygote // replaced or evicted, stopped at close at the latest
	closed   bool
	stopping sync.WaitGroup // stopAsync in progress; added to under mu while !closed
}

func newZygotePool(bwrapPath string) *zygotePool {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	return &zygotePool{bwrap: bwrapPath, tag: "z" + hex.EncodeToString(rnd[:]), zs: map[string]*zygote{}}
}

// zygote is one running bwrap with its server.
type zygote struct {
	pool *zygotePool
	key  string
	cmd  *exec.Cmd
	sock int
	wmu  sync.Mutex // one frame at a time; guards sock (-1 once closed)

	ready    chan struct{} // closed once started (or failed: startErr)
	startErr error
	dead     chan struct{} // closed when the server's socket ended
	deadErr  error
	exited   chan struct{} // closed when bwrap was reaped
	stderr   *boundedBuffer

	mu       sync.Mutex
	nextID   uint64
	procs    map[uint64]*ZygoteProcess
	live     int
	leases   int // callers between get and release: never stopped while > 0
	lastUsed time.Time
	retired  bool // out of the pool: stop once idle
}

// idleLocked reports whether z runs no command and nobody holds it; the
// caller holds z.mu.
func (z *zygote) idleLocked() bool {
	return z.live == 0 && z.leases == 0
}

// gone reports whether z failed to start or its bwrap was reaped.
func (z *zygote) gone() bool {
	select {
	case <-z.ready:
	default:
		return false
	}
	if z.startErr != nil || z.exited == nil {
		return true
	}
	select {
	case <-z.exited:
		return true
	default:
		return false
	}
}

// get returns the running zygote for l's key, starting one when needed,
// leased to the caller: it is not stopped (evicted, trimmed, retired)
// before the caller calls release, which it must, also after an error.
func (p *zygotePool) get(l *ZygoteLaunch) (*zygote, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errors.New("sandbox zygote: backend closed")
	}
	z := p.zs[l.key]
	if z != nil {
		select {
		case <-z.dead:
			delete(p.zs, l.key) // crashed or stopped: start a new one
			z = nil
		default:
		}
	}
	fresh := z == nil
	if fresh {
		z = &zygote{pool: p, key: l.key, sock: -1, ready: make(chan struct{}), dead: make(chan struct{}),
			procs: map[uint64]*ZygoteProcess{}, lastUsed: time.Now(), stderr: &boundedBuffer{max: 4096}}
		p.zs[l.key] = z
	}
	z.mu.Lock()
	z.leases++ // under p.mu: evictLocked never sees z unleased in between
	z.mu.Unlock()
	var evict []*zygote
	if fresh {
		evict = p.evictLocked(z)
	}
	p.mu.Unlock()
	// Stopped before this one starts, so that the pool's memory stays
	// bounded while zygotes turn over.
	for _, e := range evict {
		e.stop()
	}
	if fresh {
		z.startErr = z.start(l)
		close(z.ready)
		if z.startErr != nil {
			p.mu.Lock()
			if p.zs[l.key] == z {
				delete(p.zs, l.key)
			}
			p.mu.Unlock()
		}
	}
	<-z.ready
	if z.startErr != nil {
		p.release(z)
		return nil, z.startErr
	}
	return z, nil
}

// evictLocked picks idle zygotes (no command, no lease) to stop so that at
// most maxZygotes remain with keep, and takes them out of the pool (into
// p.retired until they are gone, so that close waits for them too); the
// caller holds p.mu and stops them.
func (p *zygotePool) evictLocked(keep *zygote) []*zygote {
	var out []*zygote
	for len(p.zs) > maxZygotes {
		var victim *zygote
		var victimUsed time.Time
		for _, z := range p.zs {
			if z == keep {
				continue
			}
			z.mu.Lock()
			idle, used := z.idleLocked(), z.lastUsed
			z.mu.Unlock()
			if idle && (victim == nil || used.Before(victimUsed)) {
				victim, victimUsed = z, used
			}
		}
		if victim == nil {
			break // every other zygote is busy: keep them (see maxZygotes)
		}
		delete(p.zs, victim.key)
		p.retireLocked(victim)
		out = append(out, victim)
	}
	return out
}

// close stops every zygote (their commands die with them) and waits for
// them to exit.
func (p *zygotePool) close() {
	p.mu.Lock()
	p.closed = true
	zs := append([]*zygote{}, p.retired...)
	for _, z := range p.zs {
		zs = append(zs, z)
	}
	p.zs, p.retired = map[string]*zygote{}, nil
	p.mu.Unlock()
	for _, z := range zs {
		z.stop()
	}
	p.stopping.Wait()
}

// start runs bwrap with the server and waits for its "ready".
func (z *zygote) start(l *ZygoteLaunch) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("sandbox zygote: %w", err)
	}
	exeFile, err := os.Open(exe)
	if err != nil {
		return fmt.Errorf("sandbox zygote: %w", err)
	}
	defer exeFile.Close()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sandbox zygote: socketpair: %w", err)
	}
	child := os.NewFile(uintptr(fds[1]), "zygote-socket")
	defer child.Close()
	// The server is the executable itself, reached through its descriptor
	// (fd 4 in the sandbox): a test binary under /tmp is hidden by the
	// sandbox's private /tmp.
	args := append(append([]string{}, l.args...), "--chdir", l.dir, "--", "/proc/self/fd/4", zygoteArg, z.pool.tag)
	env := []string{zygoteEnv + "=1"}
	if l.netfwd != "" {
		env = append(env, netfwdZygoteEnv+"="+l.netfwd)
	}
	z.cmd = &exec.Cmd{Path: z.pool.bwrap, Args: args, Env: env,
		ExtraFiles: []*os.File{child, exeFile}, Stderr: z.stderr}
	if err := z.cmd.Start(); err != nil {
		_ = unix.Close(fds[0])
		return fmt.Errorf("sandbox zygote: start bwrap: %w", err)
	}
	z.sock = fds[0]
	z.exited = make(chan struct{})
	go func() {
		_ = z.cmd.Wait()
		close(z.exited)
	}()
	readyc := make(chan error, 1)
	go z.read(readyc)
	t := time.NewTimer(zygoteStartTimeout)
	defer t.Stop()
	select {
	case err := <-readyc:
		if err == nil {
			return nil
		}
		<-z.dead
		return err
	case <-t.C:
		_ = z.cmd.Process.Kill()
		<-z.dead
		return fmt.Errorf("sandbox zygote: no ready from the server within %v: %s", zygoteStartTimeout, z.stderr)
	}
}

// read dispatches the server's replies until the socket ends; then every
// pending start fails and every running command is waited for by its
// pidfd (the zygote's PID namespace took it down).
func (z *zygote) read(readyc chan<- error) {
	first := true
	var err error
	for {
		var rep zyReply
		var fds []int
		fds, err = readFrame(z.sock, &rep)
		if err != nil {
			break
		}
		if first {
			first = false
			if rep.Kind != "ready" {
				closeFDs(fds)
				err = fmt.Errorf("sandbox zygote: unexpected first reply %q", rep.Kind)
				break
			}
			readyc <- nil
			continue
		}
		z.mu.Lock()
		p := z.procs[rep.ID]
		idle := false
		if rep.Kind == "exited" && p != nil {
			delete(z.procs, rep.ID)
			z.live--
			z.lastUsed = time.Now()
			idle = z.idleLocked()
		}
		retired := z.retired
		z.mu.Unlock()
		switch {
		case idle && retired:
			z.pool.stopAsync(z)
		case idle:
			z.pool.trim() // does not block: zygotes are stopped in the background
		}
		if p == nil {
			closeFDs(fds)
			continue
		}
		switch rep.Kind {
		case "started":
			if rep.Err == "" && len(fds) == 1 {
				p.PidFD = fds[0]
			} else {
				closeFDs(fds)
				if rep.Err == "" {
					rep.Err = "sandbox zygote: started reply without a pidfd"
				}
			}
			z.mu.Lock()
			p.started = true
			z.mu.Unlock()
			p.start <- rep
		case "exited":
			closeFDs(fds)
			p.status = syscall.WaitStatus(rep.Status)
			close(p.done)
		default:
			closeFDs(fds)
		}
	}
	// The socket ended: the server exited (stopped, crashed or killed).
	if errors.Is(err, io.EOF) {
		err = errors.New("server exited")
	}
	z.mu.Lock()
	procs := z.procs
	z.procs = map[uint64]*ZygoteProcess{}
	z.live = 0
	z.mu.Unlock()
	z.wmu.Lock()
	_ = unix.Close(z.sock)
	z.sock = -1
	z.wmu.Unlock()
	// Wait for bwrap to be gone before reporting, so its stderr is complete.
	z.deadErr = fmt.Errorf("sandbox zygote died: %v", err)
	if first {
		_ = z.cmd.Process.Kill()
		<-z.exited
		readyc <- fmt.Errorf("sandbox zygote: bwrap failed to start the server (%v): %s", err, strings.TrimSpace(z.stderr.String()))
		close(z.dead)
		return
	}
	close(z.dead)
	for _, p := range procs {
		if !p.started {
			p.start <- zyReply{Kind: "started", Err: z.deadErr.Error()} // Spawn reports it
			continue
		}
		go p.orphaned(z.deadErr)
	}
}

// orphaned completes a command whose zygote died: the kernel kills every
// process of a PID namespace whose init exits, so it ends too.
func (p *ZygoteProcess) orphaned(cause error) {
	if p.PidFD >= 0 {
		fds := []unix.PollFd{{Fd: int32(p.PidFD), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); !errors.Is(err, unix.EINTR) {
				break
			}
		}
	}
	p.status = syscall.WaitStatus(unix.SIGKILL) // signalled, no core
	p.err = cause
	close(p.done)
}

// spawn sends one request and waits for its "started".
func (z *zygote) spawn(l *ZygoteLaunch, s ZygoteSpawn) (*ZygoteProcess, error) {
	p := &ZygoteProcess{PidFD: -1, z: z, start: make(chan zyReply, 1), done: make(chan struct{})}
	z.mu.Lock()
	select {
	case <-z.dead:
		z.mu.Unlock()
		return nil, z.deadErr
	default:
	}
	z.nextID++
	p.id = z.nextID
	z.procs[p.id] = p
	z.live++
	z.lastUsed = time.Now()
	z.mu.Unlock()
	req := zyRequest{ID: p.id, Path: l.path, Argv: l.argv, Env: l.env, Dir: l.dir, Terminal: s.Terminal, NFiles: len(s.Files), Cgroup: true, Checks: l.checks}
	if req.Env == nil {
		req.Env = []string{}
	}
	fds := make([]int, 0, len(s.Files)+1)
	for _, f := range s.Files {
		fds = append(fds, int(f.Fd()))
	}
	fds = append(fds, s.CgroupFD)
	z.wmu.Lock()
	var err error = unix.EBADF
	if z.sock >= 0 {
		err = writeFrame(z.sock, req, fds)
	}
	z.wmu.Unlock()
	if err != nil {
		z.forget(p.id)
		return nil, fmt.Errorf("sandbox zygote: send request: %w", err)
	}
	rep := <-p.start
	if rep.Stale {
		z.forget(p.id)
		return nil, fmt.Errorf("%w: %s", errStale, rep.Err)
	}
	if rep.Err != "" {
		z.forget(p.id)
		return nil, errors.New(rep.Err)
	}
	pid, err := pidOfPidfd(p.PidFD)
	z.wmu.Lock()
	if z.sock >= 0 {
		_ = writeFrame(z.sock, zyRequest{ID: p.id, Ack: true}, nil)
	}
	z.wmu.Unlock()
	if err != nil {
		// Without its pid the command cannot be managed: kill it.
		_ = unix.PidfdSendSignal(p.PidFD, unix.SIGKILL, nil, 0)
		go func() { _, _ = p.Wait() }() // closes the pidfd once it is reported gone
		return nil, fmt.Errorf("sandbox zygote: %w", err)
	}
	p.Pid = pid
	return p, nil
}

// forget drops a request that never started.
func (z *zygote) forget(id uint64) {
	z.mu.Lock()
	if _, ok := z.procs[id]; ok {
		delete(z.procs, id)
		z.live--
	}
	z.mu.Unlock()
}

// pidOfPidfd reads the pid a pidfd refers to, in this process's PID
// namespace (the "Pid:" line of its fdinfo).
func pidOfPidfd(fd int) (int, error) {
	if fd < 0 {
		return 0, errors.New("no pidfd for the command")
	}
	b, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(fd))
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Pid:"); ok {
			pid, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || pid <= 0 {
				return 0, fmt.Errorf("pidfd: command already gone or invisible (Pid: %s)", strings.TrimSpace(v))
			}
			return pid, nil
		}
	}
	return 0, errors.New("pidfd: no Pid in fdinfo")
}

// stop shuts the server's socket (the server exits, its PID namespace and
// every command in it with it) and waits for bwrap; after two seconds it
// kills bwrap.
func (z *zygote) stop() {
	<-z.ready
	if z.startErr != nil {
		return
	}
	z.wmu.Lock()
	if z.sock >= 0 {
		_ = unix.Shutdown(z.sock, unix.SHUT_RDWR)
	}
	z.wmu.Unlock()
	t := time.NewTimer(2 * time.Second)
	defer t.Stop()
	select {
	case <-z.dead:
	case <-t.C:
		_ = z.cmd.Process.Kill()
		<-z.dead
	}
	<-z.exited
}

// boundedBuffer keeps the first max bytes written (bwrap's stderr).
type boundedBuffer struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *boundedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// ZygoteTag returns the marker in the command line of every zygote that
// backend b runs (bwrap and its server), or "" when b runs none:
// diagnostics and tests find a runtime's zygote processes by it.
func ZygoteTag(b Backend) string {
	if bw, ok := b.(*bwrap); ok {
		return bw.zygotes.tag
	}
	return ""
}

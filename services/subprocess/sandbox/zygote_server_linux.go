package sandbox

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// init turns a re-exec of the current executable inside a zygote's bwrap
// into the zygote server: argv[1] is zygoteArg and the environment holds
// zygoteEnv=1 (the harness sets both; the server's socket is fd 3). It
// never returns there. Every program that imports this package (the
// harness, test binaries) can therefore serve as a zygote without a hook
// of its own.
func init() {
	if len(os.Args) >= 3 && os.Args[1] == zygoteArg && os.Getenv(zygoteEnv) == "1" {
		os.Exit(serveZygote(3))
	}
}

// serveZygote runs the server on the socket sock until the harness closes
// it; it returns the exit status.
func serveZygote(sock int) int {
	// Commands share this PID namespace: they must not read this process's
	// memory or descriptors (its socket could start commands) nor ptrace
	// it. The sandbox dropped every capability, so non-dumpable holds even
	// for root.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	_ = os.Unsetenv(zygoteEnv)
	if fwd := os.Getenv(netfwdZygoteEnv); fwd != "" {
		_ = os.Unsetenv(netfwdZygoteEnv)
		if err := startZygoteForwarder(fwd); err != nil {
			fmt.Fprintf(os.Stderr, "harness sandbox zygote: network proxy forwarder: %v\n", err)
			return 1
		}
	}
	// Nothing inherited (the executable's fd 4) may reach a command.
	_ = unix.CloseRange(uint(sock)+1, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC)
	unix.CloseOnExec(sock)
	var wmu sync.Mutex
	send := func(rep zyReply, fds []int) error {
		wmu.Lock()
		defer wmu.Unlock()
		return writeFrame(sock, rep, fds)
	}
	acks := &ackSet{m: map[uint64]chan struct{}{}}
	if err := send(zyReply{Kind: "ready"}, nil); err != nil {
		fmt.Fprintf(os.Stderr, "harness sandbox zygote: %v\n", err)
		return 1
	}
	for {
		var req zyRequest
		fds, err := readFrame(sock, &req)
		if errors.Is(err, io.EOF) {
			return 0
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "harness sandbox zygote: %v\n", err)
			return 1
		}
		if req.Ack {
			closeFDs(fds)
			acks.done(req.ID)
			continue
		}
		if err := serveOne(req, fds, send, acks); err != nil {
			return 1
		}
	}
}

// serveOne starts one command and reports it; a goroutine reports its
// exit. Only a failure to reply is returned (the socket is gone).
func serveOne(req zyRequest, fds []int, send func(zyReply, []int) error, acks *ackSet) error {
	want := req.NFiles
	if req.Cgroup {
		want++
	}
	if req.NFiles < 3 || len(fds) != want || len(req.Argv) == 0 || req.Path == "" {
		closeFDs(fds)
		return send(zyReply{ID: req.ID, Kind: "started", Err: fmt.Sprintf("sandbox zygote: bad request: %d descriptors for %d files, argv %d", len(fds), req.NFiles, len(req.Argv))}, nil)
	}
	for _, c := range req.Checks {
		if !c.holds() {
			closeFDs(fds)
			return send(zyReply{ID: req.ID, Kind: "started", Stale: true, Err: c.Path + " changed on the host"}, nil)
		}
	}
	files := make([]*os.File, req.NFiles)
	for i := range files {
		files[i] = os.NewFile(uintptr(fds[i]), "fd")
	}
	defer func() {
		for _, f := range files {
			_ = f.Close()
		}
	}()
	defer closeFDs(fds[req.NFiles:]) // the cgroup directory
	attr := &syscall.SysProcAttr{Setsid: true}
	if req.Terminal {
		attr.Setctty, attr.Ctty = true, 0
	}
	if req.Cgroup {
		attr.UseCgroupFD, attr.CgroupFD = true, fds[req.NFiles]
	}
	cmd := &exec.Cmd{Path: req.Path, Args: req.Argv, Env: req.Env, Dir: req.Dir,
		Stdin: files[0], Stdout: files[1], Stderr: files[2], ExtraFiles: files[3:], SysProcAttr: attr}
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	if err := cmd.Start(); err != nil {
		return send(zyReply{ID: req.ID, Kind: "started", Err: err.Error()}, nil)
	}
	pidfd, err := unix.PidfdOpen(cmd.Process.Pid, 0)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return send(zyReply{ID: req.ID, Kind: "started", Err: fmt.Sprintf("sandbox zygote: pidfd_open: %v", err)}, nil)
	}
	ack := acks.add(req.ID)
	err = send(zyReply{ID: req.ID, Kind: "started"}, []int{pidfd})
	_ = unix.Close(pidfd)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return err
	}
	go func() {
		// Reap only once the harness has the pid: a reaped command's
		// pidfd no longer names it.
		var info unix.Siginfo
		for {
			if err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil); !errors.Is(err, unix.EINTR) {
				break
			}
		}
		<-ack
		_ = cmd.Wait()
		status := 0
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
			status = int(ws)
		}
		_ = send(zyReply{ID: req.ID, Kind: "exited", Status: status}, nil)
	}()
	return nil
}

// ackSet holds, per command, the channel closed when the harness acked
// its "started".
type ackSet struct {
	mu sync.Mutex
	m  map[uint64]chan struct{}
}

func (a *ackSet) add(id uint64) <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := make(chan struct{})
	a.m[id] = c
	return c
}

func (a *ackSet) done(id uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.m[id]; ok {
		close(c)
		delete(a.m, id)
	}
}

//go:build unix

package subprocess

import (
	"net"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// commandSysProcAttr starts a command in a session (and process group) of
// its own: its range when there is no cgroup leaf.
func commandSysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// newProcessRange is the range of a command started without a cgroup
// leaf: its process group.
func newProcessRange(_ *exec.Cmd, pid int, wd *watchdog) (managedRange, error) {
	return newPgidRange(pid, wd), nil
}

// noteLeaderExit waits, for a process-group range, until the direct child
// exited (before it is reaped).
func (h *Handle) noteLeaderExit() {
	if pg, ok := h.rng.(*pgidRange); ok {
		// The leader is a zombie from here on: exited, not yet reaped.
		// Marking that before the reap below frees its pid is what lets
		// the range tell the leader from a later holder of the number.
		if err := awaitExit(h.pid); err == nil {
			pg.leaderExited.Store(true)
		} else {
			h.rt.log.Debug("subprocess: await exit", "pid", h.pid, "err", err)
		}
	}
}

func socketpair() (net.Conn, *os.File, error) {
	fds, err := socketpairCloexec()
	if err != nil {
		return nil, nil, err
	}
	pf := os.NewFile(uintptr(fds[0]), "control")
	conn, err := net.FileConn(pf)
	_ = pf.Close()
	if err != nil {
		_ = unix.Close(fds[1])
		return nil, nil, err
	}
	return conn, os.NewFile(uintptr(fds[1]), "control-child"), nil
}

func outcomeOf(ps *os.ProcessState) Outcome {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		return Outcome{Signal: unix.SignalName(ws.Signal())}
	}
	code := ps.ExitCode()
	return Outcome{ExitCode: &code}
}

// outcomeOfStatus is outcomeOf for a raw wait status (a command a shared
// sandbox reaped).
func outcomeOfStatus(ws syscall.WaitStatus) Outcome {
	if ws.Signaled() {
		return Outcome{Signal: unix.SignalName(ws.Signal())}
	}
	code := ws.ExitStatus()
	return Outcome{ExitCode: &code}
}

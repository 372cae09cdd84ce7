package subprocess

import (
	"errors"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// pipeCloexec makes a pipe whose ends are close-on-exec. macOS has no
// pipe2: the pipe is made and marked under syscall.ForkLock, as os/exec
// does, so no concurrent fork inherits it in between.
func pipeCloexec(p *[2]int) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	if err := unix.Pipe(p[:]); err != nil {
		return err
	}
	unix.CloseOnExec(p[0])
	unix.CloseOnExec(p[1])
	return nil
}

// socketpairCloexec makes a unix stream socketpair whose ends are
// close-on-exec, marked under syscall.ForkLock (no SOCK_CLOEXEC on macOS).
func socketpairCloexec() ([2]int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return fds, err
	}
	unix.CloseOnExec(fds[0])
	unix.CloseOnExec(fds[1])
	return fds, nil
}

// startInCgroup is never called on macOS: there are no cgroups, so a
// runtime has no managed cgroup and bounds each command by its process
// group.
func startInCgroup(*syscall.SysProcAttr, int) {}

// markInheritedCloexec marks every open descriptor from 3 up
// close-on-exec, as listed by /dev/fd (macOS has no close_range).
func markInheritedCloexec() {
	ents, err := os.ReadDir("/dev/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd >= 3 {
			unix.CloseOnExec(fd)
		}
	}
}

// notDumpableCall names what setNotDumpable would do, for its warning.
const notDumpableCall = "not-dumpable (PR_SET_DUMPABLE)"

// setNotDumpable fails: macOS has no equivalent of Linux's
// PR_SET_DUMPABLE (a same-user process can read this process's
// environment through sysctl KERN_PROCARGS2).
func setNotDumpable() error {
	return errors.New("macOS has no equivalent of PR_SET_DUMPABLE")
}

// ptsName is "": the terminal's name only serves to find, through /proc
// (Linux), whether its program waits for input, and macOS has no /proc.
func ptsName(*os.File) (string, error) { return "", nil }

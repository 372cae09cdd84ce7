package subprocess

import (
	"math"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// pipeCloexec makes a pipe whose ends are close-on-exec from the start
// (pipe2 O_CLOEXEC).
func pipeCloexec(p *[2]int) error { return unix.Pipe2(p[:], unix.O_CLOEXEC) }

// socketpairCloexec makes a unix stream socketpair whose ends are
// close-on-exec from the start.
func socketpairCloexec() ([2]int, error) {
	return unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
}

// startInCgroup makes the child start in the cgroup whose directory
// descriptor is fd (clone3 CLONE_INTO_CGROUP).
func startInCgroup(attr *syscall.SysProcAttr, fd int) {
	attr.UseCgroupFD, attr.CgroupFD = true, fd
}

// markInheritedCloexec marks every descriptor from 3 up close-on-exec
// (close_range CLOSE_RANGE_CLOEXEC).
func markInheritedCloexec() {
	_ = unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC)
}

// notDumpableCall names what setNotDumpable does, for its warning.
const notDumpableCall = "prctl(PR_SET_DUMPABLE, 0)"

// setNotDumpable keeps same-user processes from reading this process's
// environment and memory through /proc or ptrace.
func setNotDumpable() error { return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }

func ptsName(master *os.File) (string, error) {
	var n uint32
	var ierr error
	err := control(master, func(fd int) { n, ierr = unix.IoctlGetUint32(fd, unix.TIOCGPTN) })
	if err == nil {
		err = ierr
	}
	return "/dev/pts/" + strconv.FormatUint(uint64(n), 10), err
}

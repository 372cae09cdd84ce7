//go:build unix

package subprocess

import "golang.org/x/sys/unix"

func syscallKill(pid int) error { return unix.Kill(pid, unix.SIGKILL) }

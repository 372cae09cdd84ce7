//go:build unix

package toolfs

import "syscall"

// mkfifo makes a FIFO, which read must refuse without hanging.
func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }

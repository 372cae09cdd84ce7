//go:build unix

package approval

import (
	"os"

	"golang.org/x/sys/unix"
)

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlGetTermios)
	return err == nil
}

// OpenTTY opens the controlling terminal, /dev/tty.
func OpenTTY() (TTY, error) { return os.OpenFile("/dev/tty", os.O_RDWR, 0) }

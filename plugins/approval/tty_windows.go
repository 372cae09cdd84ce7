//go:build windows

package approval

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// IsTerminal reports whether f is a console (GetConsoleMode succeeds).
func IsTerminal(f *os.File) bool {
	var mode uint32
	return windows.GetConsoleMode(windows.Handle(f.Fd()), &mode) == nil
}

// OpenTTY opens the console: input from CONIN$, output to CONOUT$ (the
// Windows counterpart of /dev/tty). Not run on Windows by our tests.
func OpenTTY() (TTY, error) {
	in, err := os.OpenFile("CONIN$", os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	out, err := os.OpenFile("CONOUT$", os.O_RDWR, 0)
	if err != nil {
		_ = in.Close()
		return nil, err
	}
	return &console{in: in, out: out}, nil
}

// console is the TTY over the two console handles. A console handle has
// no read deadline: SetReadDeadline cancels a pending read with CancelIoEx
// once the deadline has passed (the only use is "cancel now").
type console struct {
	in, out *os.File
}

func (c *console) Read(p []byte) (int, error)  { return c.in.Read(p) }
func (c *console) Write(p []byte) (int, error) { return c.out.Write(p) }

// Close closes both handles.
func (c *console) Close() error { return errors.Join(c.in.Close(), c.out.Close()) }

// SetReadDeadline cancels the pending read when t is not in the future;
// a future deadline is not supported.
func (c *console) SetReadDeadline(t time.Time) error {
	if t.IsZero() || time.Until(t) > 0 {
		return os.ErrNoDeadline
	}
	return windows.CancelIoEx(windows.Handle(c.in.Fd()), nil)
}

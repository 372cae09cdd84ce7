package toolfs

import (
	"bytes"
	"os"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// openedPath is the path the kernel opened for file (fcntl F_GETPATH):
// what a symlink swapped in after the check points at.
func openedPath(file *os.File) string {
	// On the heap, which the Go runtime does not move, and kept alive
	// until fcntl returned: fcntl writes at most MAXPATHLEN bytes.
	buf := make([]byte, unix.PathMax)
	_, err := unix.FcntlInt(file.Fd(), unix.F_GETPATH, int(uintptr(unsafe.Pointer(&buf[0]))))
	runtime.KeepAlive(buf)
	if err != nil {
		return file.Name()
	}
	if i := bytes.IndexByte(buf, 0); i >= 0 {
		buf = buf[:i]
	}
	return string(buf)
}

//go:build windows

package toolfs

import (
	"os"
	"strings"

	"golang.org/x/sys/windows"
)

// openedPath is the path the system opened for file
// (GetFinalPathNameByHandle, links resolved, without the \\?\ prefix):
// what a link swapped in after the check points at.
func openedPath(file *os.File) string {
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n, err := windows.GetFinalPathNameByHandle(windows.Handle(file.Fd()), &buf[0], uint32(len(buf)), volumeNameDOS)
	if err != nil || n == 0 || int(n) > len(buf) {
		return file.Name()
	}
	p := windows.UTF16ToString(buf[:n])
	if rest, ok := strings.CutPrefix(p, `\\?\UNC\`); ok {
		return `\\` + rest
	}
	return strings.TrimPrefix(p, `\\?\`)
}

// volumeNameDOS is VOLUME_NAME_DOS (a drive-letter path), 0 in the SDK.
const volumeNameDOS = 0x0

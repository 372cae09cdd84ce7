package toolfs

import (
	"fmt"
	"os"
)

// openedPath is the path the kernel opened for file (its /proc/self/fd
// link): what a symlink swapped in after the check points at.
func openedPath(file *os.File) string {
	p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", file.Fd()))
	if err != nil {
		return file.Name()
	}
	return p
}

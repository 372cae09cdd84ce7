//go:build unix

package subprocess

import (
	"os"

	"golang.org/x/sys/unix"
)

// spillOpenFlags are the extra flags of a spill file's exclusive create:
// never through a symlink, never inherited by a child.
const spillOpenFlags = unix.O_NOFOLLOW | unix.O_CLOEXEC

// pathSeparators are the characters that make a command a path.
const pathSeparators = "/"

// executableFile returns p when it is a regular file this process may
// execute.
func executableFile(p string) (string, bool) { return p, isExecutableFile(p) }

// isExecutableFile reports whether p is a regular file this process may
// execute.
func isExecutableFile(p string) bool {
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	return unix.Access(p, unix.X_OK) == nil
}

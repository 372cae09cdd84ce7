package checkpoints

import (
	"io/fs"
	"syscall"
)

// inodeCTime returns the inode number and change time (ns) of info.
func inodeCTime(info fs.FileInfo) (uint64, int64) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Ino, st.Ctimespec.Nano()
	}
	return 0, 0
}

//go:build unix

package toolfs

import (
	"io/fs"
	"syscall"
)

// addInode sets v's device, inode and change time from info's stat data.
func addInode(v *Version, info fs.FileInfo) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		v.Dev = uint64(st.Dev) //nolint:unconvert // int32 on darwin
		v.Ino = st.Ino
		v.CtimeNs = ctimeNs(st)
	}
}

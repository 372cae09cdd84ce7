//go:build unix

package sandbox

import (
	"io/fs"
	"syscall"
)

// fileIdentity returns the device and inode of fi and its link count;
// false when fi carries no stat data.
func fileIdentity(fi fs.FileInfo) (id fileID, nlink uint64, ok bool) {
	s, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, 0, false
	}
	return fileID{uint64(s.Dev), s.Ino}, uint64(s.Nlink), true //nolint:unconvert // Dev and Nlink differ in width across Unixes
}

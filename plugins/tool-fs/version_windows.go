//go:build windows

package toolfs

import "io/fs"

// addInode does nothing: a Windows FileInfo has no device, file index or
// change time, so a Version there is size and modification time only (a
// write that keeps both is not seen by the read-before-write check).
func addInode(*Version, fs.FileInfo) {}

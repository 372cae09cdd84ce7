//go:build windows

package sandbox

import "io/fs"

// fileIdentity returns false: a Windows FileInfo carries no volume serial
// or file index, so the hard-link and replaced-file checks that use it are
// off there (there is no sandbox on Windows for them to back up).
func fileIdentity(fs.FileInfo) (id fileID, nlink uint64, ok bool) {
	return fileID{}, 0, false
}

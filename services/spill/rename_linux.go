package spill

import (
	"errors"

	"golang.org/x/sys/unix"
)

// renameNoReplace moves path to name in the directory dirFD, failing with
// EEXIST rather than replacing a file already there (renameat2 with
// RENAME_NOREPLACE).
func renameNoReplace(path string, dirFD int, name string) error {
	return unix.Renameat2(unix.AT_FDCWD, path, dirFD, name, unix.RENAME_NOREPLACE)
}

// renameNeedsCopy reports whether renameNoReplace's err means the file must
// be copied instead: another file system, or a kernel or file system
// without RENAME_NOREPLACE.
func renameNeedsCopy(err error) bool {
	return errors.Is(err, unix.EXDEV) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL)
}

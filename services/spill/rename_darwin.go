package spill

import (
	"errors"

	"golang.org/x/sys/unix"
)

// renameNoReplace moves path to name in the directory dirFD, failing with
// EEXIST rather than replacing a file already there (renameatx_np with
// RENAME_EXCL).
func renameNoReplace(path string, dirFD int, name string) error {
	return unix.RenameatxNp(unix.AT_FDCWD, path, dirFD, name, unix.RENAME_EXCL)
}

// renameNeedsCopy reports whether renameNoReplace's err means the file must
// be copied instead: another file system, or a file system without
// RENAME_EXCL (ENOTSUP).
func renameNeedsCopy(err error) bool {
	return errors.Is(err, unix.EXDEV) || errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EINVAL)
}

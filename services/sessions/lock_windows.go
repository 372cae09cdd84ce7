//go:build windows

package sessions

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// tryLock takes an exclusive LockFileEx lock on f without waiting: busy
// when another handle holds it. Windows byte-range locks are mandatory,
// so the lock covers one byte far past any log's end (offset 2^63-1):
// readers, which take no lock, can still read every record. The lock is
// released when f's handle is closed or the process dies.
func tryLock(f *os.File) (busy bool, err error) {
	ol := windows.Overlapped{Offset: 0xFFFFFFFF, OffsetHigh: 0x7FFFFFFF}
	flags := uint32(windows.LOCKFILE_EXCLUSIVE_LOCK | windows.LOCKFILE_FAIL_IMMEDIATELY)
	err = windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, &ol)
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, windows.ERROR_LOCK_VIOLATION), errors.Is(err, windows.ERROR_IO_PENDING):
		return true, nil
	}
	return false, err
}

// openNoFollow opens path and fails when it is a symlink (or another
// reparse point Lstat reports as one). Windows has no O_NOFOLLOW: path is
// checked with Lstat before the open and the opened file is compared
// with a second Lstat after it. Residual race: a symlink swapped in
// between the open and the second Lstat and swapped back before it is not
// seen; a swap that stays is (the file opened differs from the name).
func openNoFollow(path string, flag int, perm os.FileMode) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, &fs.PathError{Op: "open", Path: path, Err: errSymlink}
	}
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return nil, err
	}
	after, lerr := os.Lstat(path)
	opened, serr := f.Stat()
	if lerr != nil || serr != nil || after.Mode()&fs.ModeSymlink != 0 || !os.SameFile(after, opened) {
		_ = f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: errSymlink}
	}
	return f, nil
}

// errSymlink is openNoFollow's error for a path that is, or became, a
// symlink.
var errSymlink = errors.New("is a symlink or was replaced while opening (not followed)")

// flockHolder returns 0: Windows does not say which process holds a
// file lock.
func flockHolder(*os.File) int { return 0 }

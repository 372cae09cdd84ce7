//go:build windows

package spill

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"
)

// ownerDir is an owner directory checked by openOwnerDir. Windows has no
// directory descriptors in Go's API: files are named by path, and each
// create is exclusive (CREATE_NEW, which never follows a link already
// there). Residual race: a directory replaced by a junction after the
// check is written through.
type ownerDir struct {
	path string
}

func (d ownerDir) close() {}

// create makes name in d exclusively.
func (d ownerDir) create(name string) (*os.File, error) {
	return os.OpenFile(filepath.Join(d.path, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, FileMode)
}

// remove deletes name in d, ignoring errors.
func (d ownerDir) remove(name string) { _ = os.Remove(filepath.Join(d.path, name)) }

// openSource opens the regular file at path for adopting, failing on a
// symlink (checked with Lstat before the open, and the opened file is
// compared with it after) and returns its size.
func openSource(path string) (*os.File, int64, error) {
	before, err := os.Lstat(path)
	if err != nil {
		return nil, 0, err
	}
	if !before.Mode().IsRegular() {
		return nil, 0, errors.New("not a regular file")
	}
	src, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	opened, err := src.Stat()
	if err != nil || !os.SameFile(before, opened) {
		_ = src.Close()
		return nil, 0, errors.New("not a regular file")
	}
	return src, opened.Size(), nil
}

// moveIn moves path to name in d without replacing a file there
// (MoveFileEx without MOVEFILE_REPLACE_EXISTING; MOVEFILE_COPY_ALLOWED
// copies across volumes) and makes it FileMode; moved is always true on
// success. src is closed first: Go opens files without FILE_SHARE_DELETE,
// and Windows does not move a file open that way. Residual race: a file
// put in path's place between that close and the move is the one moved.
func (d ownerDir) moveIn(path string, src *os.File, name string) (moved bool, err error) {
	from, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return false, err
	}
	dst := filepath.Join(d.path, name)
	to, err := windows.UTF16PtrFromString(dst)
	if err != nil {
		return false, err
	}
	_ = src.Close()
	if err := windows.MoveFileEx(from, to, windows.MOVEFILE_COPY_ALLOWED); err != nil {
		return false, err
	}
	if err := os.Chmod(dst, FileMode); err != nil {
		return false, err
	}
	return true, nil
}

// dirNotEmpty reports whether err, from removing a directory, means it
// still has entries.
func dirNotEmpty(err error) bool {
	return errors.Is(err, windows.ERROR_DIR_NOT_EMPTY)
}

// openOwnerDir creates dir if needed and checks that it is a directory, not
// a symlink. Windows has no Unix owner or mode bits: the directory's
// access comes from the ACL it inherits from the state directory.
func (s *LocalStore) openOwnerDir(dir string) (ownerDir, error) {
	if err := os.Mkdir(dir, DirMode); err != nil && !errors.Is(err, fs.ErrExist) {
		return ownerDir{}, fmt.Errorf("spill-local: owner directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return ownerDir{}, fmt.Errorf("spill-local: owner directory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return ownerDir{}, fmt.Errorf("spill-local: owner directory %s: not a directory", dir)
	}
	s.ownMu.Lock()
	s.owned[dir] = struct{}{}
	s.ownMu.Unlock()
	return ownerDir{path: dir}, nil
}

//go:build unix

package spill

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// ownerDir is an owner directory opened by openOwnerDir: files are created,
// removed and moved in relative to its descriptor, so a directory swapped
// for a symlink after the open is never written through.
type ownerDir struct {
	fd   int
	path string
}

func (d ownerDir) close() { _ = unix.Close(d.fd) }

// create makes name in d exclusively (O_EXCL|O_NOFOLLOW), mode FileMode.
func (d ownerDir) create(name string) (*os.File, error) {
	fd, err := unix.Openat(d.fd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(FileMode))
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), filepath.Join(d.path, name)), nil
}

// remove unlinks name in d, ignoring errors.
func (d ownerDir) remove(name string) { _ = unix.Unlinkat(d.fd, name, 0) }

// openSource opens the regular file at path for adopting, never through a
// symlink, and returns its size.
func openSource(path string) (*os.File, int64, error) {
	src, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, 0, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(src.Fd()), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		_ = src.Close()
		return nil, 0, errors.New("not a regular file")
	}
	return src, st.Size, nil
}

// moveIn renames path, opened as src, to name in d without replacing a
// file there, checks that the name now holds src and makes it FileMode.
// moved is false, with a nil error, when the file must be copied instead
// (another file system, or no rename-without-replace here).
func (d ownerDir) moveIn(path string, src *os.File, name string) (moved bool, err error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(src.Fd()), &st); err != nil {
		return false, err
	}
	err = renameNoReplace(path, d.fd, name)
	switch {
	case renameNeedsCopy(err):
		return false, nil
	case err != nil:
		return false, err
	}
	// The name now in the directory must be the file opened above.
	var after unix.Stat_t
	if err := unix.Fstatat(d.fd, name, &after, unix.AT_SYMLINK_NOFOLLOW); err != nil || after.Ino != st.Ino || after.Dev != st.Dev {
		d.remove(name)
		return false, errors.New("the file changed while it was moved")
	}
	if err := unix.Fchmod(int(src.Fd()), uint32(FileMode)); err != nil {
		return false, err
	}
	return true, nil
}

// dirNotEmpty reports whether err, from removing a directory, means it
// still has entries.
func dirNotEmpty(err error) bool {
	return errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST)
}

// openOwnerDir creates dir (0700) if needed and opens it without following a
// symlink. An existing entry must be a directory owned by this user; its mode
// is reset to 0700.
func (s *LocalStore) openOwnerDir(dir string) (ownerDir, error) {
	if err := os.Mkdir(dir, DirMode); err != nil && !errors.Is(err, fs.ErrExist) {
		return ownerDir{}, fmt.Errorf("spill-local: owner directory: %w", err)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return ownerDir{}, fmt.Errorf("spill-local: owner directory %s: %w", dir, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return ownerDir{}, fmt.Errorf("spill-local: owner directory %s: %w", dir, err)
	}
	if int(st.Uid) != os.Geteuid() {
		unix.Close(fd)
		return ownerDir{}, fmt.Errorf("spill-local: owner directory %s: owned by uid %d, not %d", dir, st.Uid, os.Geteuid())
	}
	if fs.FileMode(st.Mode)&fs.ModePerm != DirMode {
		if err := unix.Fchmod(fd, uint32(DirMode)); err != nil {
			unix.Close(fd)
			return ownerDir{}, fmt.Errorf("spill-local: owner directory %s: %w", dir, err)
		}
	}
	s.ownMu.Lock()
	s.owned[dir] = struct{}{}
	s.ownMu.Unlock()
	return ownerDir{fd: fd, path: dir}, nil
}

//go:build unix

package sessions

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// tryLock takes an exclusive flock on f without waiting: busy when
// another open file description holds it.
func tryLock(f *os.File) (busy bool, err error) {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return false, nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return true, nil
		}
		return false, err
	}
}

// openNoFollow opens path with O_NOFOLLOW: a symlink in its place is an
// error, never followed.
func openNoFollow(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag|unix.O_NOFOLLOW, perm)
}

// flockHolder returns the pid holding a flock write lock on f's file as
// /proc/locks reports it, or 0 when that is not known.
func flockHolder(f *os.File) int {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return 0
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		return 0
	}
	dev := uint64(st.Dev) // int32 on some platforms
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(dev), unix.Minor(dev), st.Ino)
	// "1: FLOCK  ADVISORY  WRITE 2246 fe:00:9978098 0 EOF"; waiters have "->" after the number.
	for line := range strings.Lines(string(b)) {
		fl := strings.Fields(line)
		if len(fl) >= 6 && fl[1] == "FLOCK" && fl[3] == "WRITE" && fl[5] == want {
			if pid, err := strconv.Atoi(fl[4]); err == nil && pid > 0 {
				return pid
			}
		}
	}
	return 0
}

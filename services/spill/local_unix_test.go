//go:build unix

package spill

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// B25: files 0600 and directories 0700 even under umask 000.
func TestSaveTextIsPrivateUnderUmask000(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	s := newStore(t, LocalOptions{})
	ref, err := s.SaveText(context.Background(), toolReq("session-a", "bash.txt", "secret"))
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(string(ref.Locator))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode() != FileMode {
		t.Errorf("file mode = %v, want %v", fi.Mode(), FileMode)
	}
	di, err := os.Lstat(filepath.Dir(string(ref.Locator)))
	if err != nil {
		t.Fatal(err)
	}
	if di.Mode() != fs.ModeDir|DirMode {
		t.Errorf("dir mode = %v, want drwx------", di.Mode())
	}
	if filepath.Dir(string(ref.Locator)) != s.OwnerDir("session-a") {
		t.Errorf("file not in the owner directory: %s", ref.Locator)
	}
	ri, _ := os.Lstat(s.Root())
	if ri.Mode().Perm() != DirMode {
		t.Errorf("root mode = %v, want 0700", ri.Mode().Perm())
	}
}

// processCPU returns the process's user+system CPU time; benchmarks report
// MB/s per CPU second besides wall-clock MB/s because the machine is shared.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

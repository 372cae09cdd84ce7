package subprocess

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// managedRange is the set of processes a handle owns: what Terminate signals
// and what WaitForExit watches.
type managedRange interface {
	// alive reports whether any member still runs (zombies count as gone).
	alive() (bool, error)
	// signal delivers sig to every member; errors are swallowed.
	signal(sig syscall.Signal)
	// release frees the range's resources once it is empty.
	release()
}

// pgidRange is the fallback range: the process group (= session, because
// every child is started with Setsid) of the direct child. Descendants that
// call setsid or setpgid escape it.
//
// Pid reuse: the kernel keeps a pgid's number allocated while any process
// (zombies included) is in the group, so the number can only be reused after
// the group emptied. A process whose pid is the pgid but whose start time
// differs from the recorded leader's is a newcomer: the group then counts as
// gone and is never signalled again.
type pgidRange struct {
	pgid        int
	leaderStart uint64
}

func newPgidRange(pid int) pgidRange {
	st, _ := readProcStat(pid)
	return pgidRange{pgid: pid, leaderStart: st.start}
}

func (r pgidRange) alive() (bool, error) {
	if err := unix.Kill(-r.pgid, 0); errors.Is(err, unix.ESRCH) {
		return false, nil
	}
	members := liveMembers(func(p procStat) bool { return p.pgrp == r.pgid })
	for _, p := range members {
		if p.pid == r.pgid && p.start != r.leaderStart {
			return false, nil
		}
	}
	return len(members) > 0, nil
}

func (r pgidRange) signal(sig syscall.Signal) {
	if alive, _ := r.alive(); alive {
		_ = unix.Kill(-r.pgid, sig)
	}
}

func (r pgidRange) release() {}

// cgroupRange is a cgroup v2 leaf created for one child (CLONE_INTO_CGROUP):
// it holds every descendant, setsid escapees and double forks included.
// SIGKILL goes through cgroup.kill; other signals go to each listed member.
// It never signals by pid or pgid number alone, so pid reuse cannot
// misdirect a signal.
type cgroupRange struct {
	dir string
}

func (r cgroupRange) alive() (bool, error) {
	b, err := os.ReadFile(filepath.Join(r.dir, "cgroup.events"))
	if err != nil {
		return false, fmt.Errorf("subprocess: observe cgroup %s: %w", r.dir, err)
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("populated ")); ok {
			if string(v) != "1" {
				return false, nil
			}
			// populated lags a task's exit slightly: a leaf whose listed
			// members are all exiting or zombies is empty already.
			for _, pid := range r.members() {
				if st, ok := readProcStat(pid); ok && !st.gone() {
					return true, nil
				}
			}
			return false, nil
		}
	}
	return false, fmt.Errorf("subprocess: observe cgroup %s: no populated field", r.dir)
}

func (r cgroupRange) signal(sig syscall.Signal) {
	if sig == unix.SIGKILL {
		if os.WriteFile(filepath.Join(r.dir, "cgroup.kill"), []byte("1"), 0) == nil {
			return
		}
	}
	for _, pid := range r.members() {
		_ = unix.Kill(pid, sig)
	}
}

func (r cgroupRange) members() []int {
	b, err := os.ReadFile(filepath.Join(r.dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for f := range strings.FieldsSeq(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

func (r cgroupRange) release() { _ = os.Remove(r.dir) }

// cgroupParent is the runtime's private cgroup v2 directory under its own
// cgroup, named harness-subprocess-<pid namespace>-<pid>-<12 hex>; each child
// gets a numbered leaf inside it.
type cgroupParent struct{ dir string }

// probeCgroup creates the runtime's private cgroup directory when cgroup v2
// is mounted, this process's cgroup is writable and cgroup.kill exists
// (kernel ≥ 5.14). Any failure means the pgid fallback.
func probeCgroup() (*cgroupParent, error) {
	mount, err := cgroup2Mount()
	if err != nil {
		return nil, err
	}
	own, err := ownCgroup()
	if err != nil {
		return nil, err
	}
	parent := filepath.Join(mount, own)
	sweepStale(parent)
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	dir := filepath.Join(parent, fmt.Sprintf("harness-subprocess-%s-%d-%s", pidNamespace(), os.Getpid(), hex.EncodeToString(rnd[:])))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("subprocess: cgroup: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("subprocess: cgroup: no cgroup.kill: %w", err)
	}
	return &cgroupParent{dir: dir}, nil
}

// leaf creates the cgroup for one child and opens it for CLONE_INTO_CGROUP.
func (c *cgroupParent) leaf(seq uint64) (cgroupRange, *os.File, error) {
	dir := filepath.Join(c.dir, "c"+strconv.FormatUint(seq, 10))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return cgroupRange{}, nil, fmt.Errorf("subprocess: cgroup leaf: %w", err)
	}
	f, err := os.OpenFile(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return cgroupRange{}, nil, fmt.Errorf("subprocess: cgroup leaf: %w", err)
	}
	return cgroupRange{dir: dir}, f, nil
}

// remove deletes the parent directory; leaves still present (a range that
// never emptied) keep it in place.
func (c *cgroupParent) remove() error {
	ents, _ := os.ReadDir(c.dir)
	for _, e := range ents {
		if e.IsDir() {
			_ = os.Remove(filepath.Join(c.dir, e.Name()))
		}
	}
	return os.Remove(c.dir)
}

func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent maj:min root mountpoint opts... - fstype source superopts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) >= 5 && len(qf) >= 1 && qf[0] == "cgroup2" && pf[3] == "/" {
			return pf[4], nil
		}
	}
	return "", errors.New("subprocess: no cgroup2 mount")
}

func ownCgroup() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(b)) {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "0::"); ok {
			return p, nil
		}
	}
	return "", errors.New("subprocess: no cgroup v2 membership")
}

// pidNamespace names this process's pid namespace (its inode number), so
// that a runtime only judges the liveness of hosts whose pids it can see.
func pidNamespace() string {
	l, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return "0"
	}
	return strings.TrimSuffix(strings.TrimPrefix(l, "pid:["), "]")
}

// sweepStale kills and removes the cgroup directories of runtimes whose
// host process no longer exists (a harness that was SIGKILLed cannot clean
// up; the next one does). A directory whose pid is alive is left alone,
// even if the pid was reused.
func sweepStale(parent string) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), "harness-subprocess-"+pidNamespace()+"-")
		if !ok || !e.IsDir() {
			continue // another pid namespace's pids mean nothing here
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid == os.Getpid() {
			continue
		}
		if err := unix.Kill(pid, 0); err == nil || errors.Is(err, unix.EPERM) {
			continue
		}
		stale := &cgroupParent{dir: filepath.Join(parent, e.Name())}
		leaves, _ := os.ReadDir(stale.dir)
		for _, l := range leaves {
			if l.IsDir() {
				_ = os.WriteFile(filepath.Join(stale.dir, l.Name(), "cgroup.kill"), []byte("1"), 0)
			}
		}
		// The kill is asynchronous: give the leaves up to a second to empty;
		// anything still busy stays for the next sweep.
		for deadline := time.Now().Add(time.Second); stale.remove() != nil && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

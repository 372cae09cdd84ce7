//go:build unix

package subprocess

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// pgidRange is the fallback range: the process group (= session, because
// every child is started with Setsid) of the direct child. Descendants that
// call setsid or setpgid escape it.
//
// Pid reuse: the kernel keeps a pgid's number allocated while any process
// (zombies included) is in the group, so the number can only be reused after
// the group emptied. Until the leader exits, a live process whose pid is the
// pgid is the leader itself (its pid cannot be reused before this runtime
// reaps it); once the leader has exited, a live process with that pid is a
// newcomer: the group then counts as gone and is never signalled again.
// Handle.wait marks the exit after observing it and before reaping, so no
// /proc read is needed to tell the two apart.
type pgidRange struct {
	pgid         int
	wd           *watchdog // told of the group until release; nil: none
	leaderExited atomic.Bool
}

// newPgidRange is the range of the just-started leader pid; wd (may be nil)
// learns of it, to kill it should this process die first.
func newPgidRange(pid int, wd *watchdog) *pgidRange {
	if wd != nil {
		st, _ := readProcStat(pid)
		wd.announce("+g " + strconv.Itoa(pid) + " " + strconv.FormatUint(st.start, 10))
	}
	return &pgidRange{pgid: pid, wd: wd}
}

func (r *pgidRange) alive() (bool, error) {
	if err := unix.Kill(-r.pgid, 0); errors.Is(err, unix.ESRCH) {
		return false, nil
	}
	members := liveMembers(func(p procStat) bool { return p.pgrp == r.pgid })
	for _, p := range members {
		if p.pid == r.pgid && r.leaderExited.Load() {
			return false, nil
		}
	}
	return len(members) > 0, nil
}

func (r *pgidRange) signal(sig syscall.Signal) {
	if alive, _ := r.alive(); alive {
		_ = unix.Kill(-r.pgid, sig)
	}
}

// release tells the watchdog the group is gone (it was observed empty).
func (r *pgidRange) release() { r.wd.announce("-g " + strconv.Itoa(r.pgid)) }

// cgroupRange is a cgroup v2 leaf lent to one child (CLONE_INTO_CGROUP):
// it holds every descendant, setsid escapees and double forks included.
// SIGKILL goes through cgroup.kill; other signals go to each listed member.
// It never signals by pid or pgid number alone, so pid reuse cannot
// misdirect a signal.
//
// Leaves are pooled (see cgroupParent): a range is a loan of a leaf for one
// generation. Once released, the loan is void: alive reports false (release
// follows an observed-empty range, which is permanent), and signal and
// members do nothing, so a stale handle can never reach the leaf's next
// child.
type cgroupRange struct {
	leaf *cgroupLeaf
	gen  uint64
}

// current reports whether the loan still holds; the caller holds leaf.mu.
func (r cgroupRange) current() bool { return r.leaf != nil && r.leaf.gen == r.gen }

func (r cgroupRange) alive() (bool, error) {
	if r.leaf == nil {
		return false, nil
	}
	r.leaf.mu.Lock()
	defer r.leaf.mu.Unlock()
	if !r.current() {
		return false, nil
	}
	populated, err := r.leaf.populated()
	if err != nil || !populated {
		return false, err
	}
	// populated lags a task's exit slightly: a leaf whose listed members
	// are all exiting or zombies is empty already.
	for _, pid := range r.leaf.members() {
		if st, ok := readProcStat(pid); ok && !st.gone() {
			return true, nil
		}
	}
	return false, nil
}

func (r cgroupRange) signal(sig syscall.Signal) {
	if r.leaf == nil {
		return
	}
	r.leaf.mu.Lock()
	defer r.leaf.mu.Unlock()
	if !r.current() {
		return
	}
	if sig == unix.SIGKILL {
		r.leaf.killed = true
		if os.WriteFile(filepath.Join(r.leaf.dir, "cgroup.kill"), []byte("1"), 0) == nil {
			return
		}
	}
	for _, pid := range r.leaf.members() {
		_ = unix.Kill(pid, sig)
	}
}

func (r cgroupRange) members() []int {
	if r.leaf == nil {
		return nil
	}
	r.leaf.mu.Lock()
	defer r.leaf.mu.Unlock()
	if !r.current() {
		return nil
	}
	return r.leaf.members()
}

// release ends the loan (idempotent) and gives the leaf back to its parent.
func (r cgroupRange) release() {
	if r.leaf == nil {
		return
	}
	r.leaf.mu.Lock()
	if !r.current() {
		r.leaf.mu.Unlock()
		return
	}
	r.leaf.gen++
	r.leaf.mu.Unlock()
	r.leaf.parent.put(r.leaf)
}

// cgroupLeaf is one leaf directory with two descriptors kept open for its
// whole life: the directory itself (the CLONE_INTO_CGROUP target) and its
// cgroup.events (re-read with pread, so a liveness probe is one syscall).
type cgroupLeaf struct {
	parent *cgroupParent
	dir    string
	dirFD  int
	events int

	mu     sync.Mutex
	gen    uint64 // bumped by every release: a cgroupRange is valid for one gen
	killed bool   // cgroup.kill was written: never lend the leaf again
}

// populated reads the leaf's "populated" flag; the caller holds mu or owns
// the idle leaf.
func (l *cgroupLeaf) populated() (bool, error) {
	var buf [128]byte
	n, err := unix.Pread(l.events, buf[:], 0)
	if err != nil {
		return false, fmt.Errorf("subprocess: observe cgroup %s: %w", l.dir, err)
	}
	for line := range bytes.Lines(buf[:n]) {
		if v, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("populated ")); ok {
			return string(v) == "1", nil
		}
	}
	return false, fmt.Errorf("subprocess: observe cgroup %s: no populated field", l.dir)
}

func (l *cgroupLeaf) members() []int {
	b, err := os.ReadFile(filepath.Join(l.dir, "cgroup.procs"))
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

// destroy closes the leaf's descriptors and removes its directory (which
// fails, leaving it for cgroupParent.remove, while a process is inside).
func (l *cgroupLeaf) destroy() {
	_ = unix.Close(l.events)
	_ = unix.Close(l.dirFD)
	_ = os.Remove(l.dir)
}

// cgroupParent is the runtime's private cgroup v2 directory under its own
// cgroup, named harness-subprocess-<pid namespace>-<pid>-<12 hex>; each child
// gets a numbered leaf inside it.
//
// Creating and removing a leaf (mkdir, open, rmdir) costs about as much as
// the rest of a spawn, so leaves are reused: a released leaf that reads
// "populated 0" (nothing inside, not even a dying task) goes back to an
// idle list of at most maxIdleLeaves and is lent to the next spawn; any
// other leaf is removed. A reused leaf is indistinguishable from a new one:
// it is empty, and its previous loan is void (cgroupRange.gen).
//
// A leaf that was ever killed through cgroup.kill is never reused: kernels
// with the CLONE_INTO_CGROUP kill_seq bug (seen on 6.18) SIGKILL every
// child later cloned into a cgroup whose kill sequence differs from the
// parent's, so such a leaf would kill its next child at birth. Killing is
// the exception (Terminate's escalation, teardown), so the pool still
// serves the common case.
type cgroupParent struct {
	dir       string
	delegated bool // made by a non-root user in its delegated cgroup

	mu     sync.Mutex
	idle   []*cgroupLeaf
	closed bool
}

// maxIdleLeaves bounds the idle leaves a runtime keeps (two descriptors
// each).
const maxIdleLeaves = 8

// leaf lends an empty leaf for one child: an idle one when there is one,
// else a new directory c<seq>. The range's descriptor is the
// CLONE_INTO_CGROUP target; it stays owned by the leaf.
func (c *cgroupParent) leaf(seq uint64) (cgroupRange, int, error) {
	c.mu.Lock()
	if n := len(c.idle); n > 0 {
		l := c.idle[n-1]
		c.idle = c.idle[:n-1]
		c.mu.Unlock()
		l.mu.Lock()
		defer l.mu.Unlock()
		return cgroupRange{leaf: l, gen: l.gen}, l.dirFD, nil
	}
	c.mu.Unlock()
	l, err := c.newLeaf(seq)
	if err != nil {
		return cgroupRange{}, -1, err
	}
	return cgroupRange{leaf: l, gen: l.gen}, l.dirFD, nil
}

func (c *cgroupParent) newLeaf(seq uint64) (*cgroupLeaf, error) {
	dir := filepath.Join(c.dir, "c"+strconv.FormatUint(seq, 10))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("subprocess: cgroup leaf: %w", err)
	}
	dirFD, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("subprocess: cgroup leaf: %w", err)
	}
	events, err := unix.Open(filepath.Join(dir, "cgroup.events"), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = unix.Close(dirFD)
		_ = os.Remove(dir)
		return nil, fmt.Errorf("subprocess: cgroup leaf: %w", err)
	}
	return &cgroupLeaf{parent: c, dir: dir, dirFD: dirFD, events: events}, nil
}

// put takes back a released leaf: idle when it is empty, was never killed
// and there is room; removed otherwise.
func (c *cgroupParent) put(l *cgroupLeaf) {
	l.mu.Lock()
	killed := l.killed
	l.mu.Unlock()
	if populated, err := l.populated(); killed || err != nil || populated {
		l.destroy()
		return
	}
	c.mu.Lock()
	if !c.closed && len(c.idle) < maxIdleLeaves {
		c.idle = append(c.idle, l)
		l = nil
	}
	c.mu.Unlock()
	if l != nil {
		l.destroy()
	}
}

// remove deletes the idle leaves and the parent directory; leaves still
// present (a range that never emptied) keep it in place. Leaves released
// afterwards are removed, not kept.
func (c *cgroupParent) remove() error {
	c.mu.Lock()
	idle := c.idle
	c.idle, c.closed = nil, true
	c.mu.Unlock()
	for _, l := range idle {
		l.destroy()
	}
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

// removeCgroupTree removes the cgroup directory dir and every cgroup
// beneath it, deepest first (a cgroup with children cannot be removed).
func removeCgroupTree(dir string) error {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() {
			_ = removeCgroupTree(filepath.Join(dir, e.Name()))
		}
	}
	return os.Remove(dir)
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
		// cgroup.kill on the directory kills its whole subtree, nested
		// runtimes' directories included (a harness run by a command of
		// another creates its own directory inside that one's leaf).
		stale := filepath.Join(parent, e.Name())
		_ = os.WriteFile(filepath.Join(stale, "cgroup.kill"), []byte("1"), 0)
		// The kill is asynchronous: give the tree up to a second to empty;
		// anything still busy stays for the next sweep.
		for deadline := time.Now().Add(time.Second); removeCgroupTree(stale) != nil && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

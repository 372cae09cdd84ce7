//go:build unix

package subprocess

import (
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// procStat is the part of /proc/<pid>/stat this package uses.
type procStat struct {
	pid, ppid, pgrp, session, tpgid int
	state                           byte
	start                           uint64 // clock ticks since boot: (pid, start) names a process across pid reuse
}

// gone reports a process that no longer runs: a zombie or a dead task.
// Zombies count as gone because PID 1 may never reap orphans.
func (p procStat) gone() bool { return p.state == 'Z' || p.state == 'X' || p.state == 'x' }

func readProcStat(pid int) (procStat, bool) {
	// One open and one read into a stack buffer: this runs for every
	// process of a /proc scan. A stat line is far shorter than buf; a
	// full buffer falls back to reading the whole file.
	path := "/proc/" + strconv.Itoa(pid) + "/stat"
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return procStat{}, false
	}
	var buf [1024]byte
	n, err := unix.Read(fd, buf[:])
	_ = unix.Close(fd)
	if err != nil || n <= 0 {
		return procStat{}, false
	}
	if n == len(buf) {
		b, err := os.ReadFile(path)
		if err != nil {
			return procStat{}, false
		}
		return parseProcStat(pid, b)
	}
	return parseProcStat(pid, buf[:n])
}

func parseProcStat(pid int, b []byte) (procStat, bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procStat{}, false
	}
	f := bytes.Fields(b[i+2:])
	if len(f) < 20 {
		return procStat{}, false
	}
	atoi := func(x []byte) int { n, _ := strconv.Atoi(string(x)); return n }
	start, _ := strconv.ParseUint(string(f[19]), 10, 64)
	return procStat{pid: pid, state: f[0][0], ppid: atoi(f[1]), pgrp: atoi(f[2]), session: atoi(f[3]), tpgid: atoi(f[5]), start: start}, true
}

// scanProc lists every readable process. Entries that vanish mid-scan are
// skipped.
func scanProc() []procStat {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	out := make([]procStat, 0, len(names))
	for _, n := range names {
		if n == "" || n[0] < '0' || n[0] > '9' {
			continue
		}
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if st, ok := readProcStat(pid); ok {
			out = append(out, st)
		}
	}
	return out
}

// liveMembers returns the processes for which keep is true and that are not
// gone.
func liveMembers(keep func(procStat) bool) []procStat {
	var out []procStat
	for _, p := range scanProc() {
		if !p.gone() && keep(p) {
			out = append(out, p)
		}
	}
	return out
}

// descendants returns the live processes in session sid or below root by
// parent links, as seen in one /proc snapshot.
func descendants(root, sid int) []procStat {
	all := scanProc()
	children := make(map[int][]procStat)
	for _, p := range all {
		children[p.ppid] = append(children[p.ppid], p)
	}
	seen := map[int]bool{root: true}
	var out []procStat
	var walk func(int)
	walk = func(pid int) {
		for _, c := range children[pid] {
			if !seen[c.pid] {
				seen[c.pid] = true
				if !c.gone() {
					out = append(out, c)
				}
				walk(c.pid)
			}
		}
	}
	walk(root)
	for _, p := range all {
		if sid > 0 && p.session == sid && !seen[p.pid] && !p.gone() {
			seen[p.pid] = true
			out = append(out, p)
		}
	}
	return out
}

// sameProcess reports whether pid still names the process recorded as st.
func sameProcess(st procStat) bool {
	now, ok := readProcStat(st.pid)
	return ok && now.start == st.start && !now.gone()
}

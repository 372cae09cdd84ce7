package subprocess

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The watchdog is a small process of ours, one per runtime, that kills
// the runtime's ranges when the runtime's process is gone, however it
// ended (SIGKILL, a crash, the OOM killer). It is this executable again
// (/proc/self/exe, argv[1] watchdogArg, watchdogEnv=1 in an environment of
// its own; see init), started before the runtime's first child, in a
// session of its own and ignoring the terminal and termination signals, so
// that a signal to the harness's process group does not take it down
// first. Its stdin is the read end of a pipe whose write end only the
// runtime holds (close-on-exec: no child inherits it). The kernel closes
// that end when the process exits; the watchdog reads EOF and then
//
//   - with cgroup isolation, writes cgroup.kill of the runtime's cgroup
//     directory (every leaf, setsid escapees and nested runtimes included)
//     and removes the directory tree, as the sweep of a later runtime would;
//   - with process groups, SIGKILLs the groups and terminal sessions the
//     runtime announced on the pipe ("+g <pgid> <start>", "+s <sid>
//     <start>") and had not yet retracted ("-g <pgid>", "-s <sid>", sent
//     when the range was observed empty). A group or session whose leader's
//     number is now held by a process with another start time is a reused
//     number and is left alone.
//
// Why not PR_SET_PDEATHSIG on each child: it reaches only the direct child
// (an npx launcher, not the node server under it), and Linux sends it when
// the thread that forked the child exits, not the process: the Landlock
// backend starts children from threads it then discards, and any goroutine
// that exits locked to a thread ends a thread that may have forked an
// unrelated child before.
//
// Runtime.Close, once every range is empty, closes the pipe and waits for
// the watchdog: it finds nothing left to kill and exits.
type watchdog struct {
	log    *slog.Logger
	cmd    *exec.Cmd
	exited chan struct{}

	mu     sync.Mutex
	w      int  // write end of the pipe (non-blocking, close-on-exec); -1 when closed
	failed bool // an announcement was lost (logged once)
}

const (
	watchdogArg = "harness-subprocess-watchdog"
	watchdogEnv = "HARNESS_SUBPROCESS_WATCHDOG"
)

// init turns a re-exec of the current executable into the watchdog (see
// watchdog): argv[1] is watchdogArg and watchdogEnv=1. It never returns
// there. Every program that imports this package can serve as its own
// watchdog without a hook in main.
func init() {
	if len(os.Args) >= 3 && os.Args[1] == watchdogArg && os.Getenv(watchdogEnv) == "1" {
		os.Exit(runWatchdog(os.Args[2:], os.Stdin))
	}
}

// startWatchdog starts the watchdog of a runtime: for the cgroup directory
// dir, or (dir empty) for announced process groups and sessions.
func startWatchdog(dir string, log *slog.Logger) (*watchdog, error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, fmt.Errorf("subprocess: watchdog pipe: %w", err)
	}
	r := os.NewFile(uintptr(p[0]), "watchdog")
	defer r.Close()
	// A stopped watchdog must not block a spawn: a full pipe loses the
	// announcement instead (logged).
	if err := unix.SetNonblock(p[1], true); err != nil {
		_ = unix.Close(p[1])
		return nil, fmt.Errorf("subprocess: watchdog pipe: %w", err)
	}
	args := []string{watchdogArg, watchdogArg, "pgid"}
	if dir != "" {
		args = []string{watchdogArg, watchdogArg, "cgroup", dir}
	}
	cmd := &exec.Cmd{Path: "/proc/self/exe", Args: args, Env: []string{watchdogEnv + "=1"}, Dir: "/",
		Stdin: r, SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
	if err := cmd.Start(); err != nil {
		_ = unix.Close(p[1])
		return nil, fmt.Errorf("subprocess: start watchdog: %w", err)
	}
	wd := &watchdog{log: log, cmd: cmd, w: p[1], exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(wd.exited)
	}()
	return wd, nil
}

// announce tells the watchdog about a range ("+g 123 456"), or that it is
// gone ("-g 123"). It never blocks: a line the pipe cannot take now (a
// stopped or dead watchdog) is lost, and the first loss is logged. A nil
// watchdog takes nothing.
func (wd *watchdog) announce(line string) {
	if wd == nil {
		return
	}
	wd.mu.Lock()
	defer wd.mu.Unlock()
	if wd.w < 0 {
		return
	}
	n, err := unix.Write(wd.w, []byte(line+"\n"))
	if (err != nil || n != len(line)+1) && !wd.failed {
		wd.failed = true
		wd.log.Warn("subprocess-local: the watchdog missed a range; it may outlive a harness killed with SIGKILL", "range", line, "err", err)
	}
}

// stop closes the pipe and waits for the watchdog to exit; when ctx ends
// first it is killed (and still awaited, which is then immediate).
func (wd *watchdog) stop(ctx context.Context) {
	if wd == nil {
		return
	}
	wd.mu.Lock()
	if wd.w >= 0 {
		_ = unix.Close(wd.w)
		wd.w = -1
	}
	wd.mu.Unlock()
	select {
	case <-wd.exited:
	case <-ctx.Done():
		_ = wd.cmd.Process.Kill()
		<-wd.exited
	}
}

// runWatchdog is the watchdog process: it reads announcements from in
// until EOF (its runtime's process is gone, or the runtime closed) and
// then kills what is left. args is "cgroup <dir>" or "pgid".
func runWatchdog(args []string, in io.Reader) int {
	signal.Ignore(unix.SIGINT, unix.SIGTERM, unix.SIGHUP, unix.SIGQUIT, unix.SIGTSTP, unix.SIGTTIN, unix.SIGTTOU, unix.SIGPIPE)
	// Same-user children must not ptrace the process that guards them.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	switch {
	case len(args) == 2 && args[0] == "cgroup":
		_, _ = io.Copy(io.Discard, in)
		killCgroupTree(args[1])
		return 0
	case len(args) == 1 && args[0] == "pgid":
		killAnnounced(readAnnouncements(in))
		return 0
	}
	fmt.Fprintf(os.Stderr, "harness subprocess watchdog: bad arguments %q\n", args)
	return 2
}

// announced is a range the watchdog holds: a process group ('g') or a
// session ('s'), named by its leader's pid and start time.
type announced struct {
	kind  byte
	id    int
	start uint64
}

// readAnnouncements applies "+k id start" and "-k id" lines until EOF and
// returns the ranges still held.
func readAnnouncements(in io.Reader) map[announced]struct{} {
	held := map[[2]int]announced{}
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || len(f[0]) != 2 || (f[0][1] != 'g' && f[0][1] != 's') {
			continue
		}
		id, err := strconv.Atoi(f[1])
		if err != nil || id <= 1 {
			continue
		}
		key := [2]int{int(f[0][1]), id}
		switch {
		case f[0][0] == '+' && len(f) == 3:
			start, err := strconv.ParseUint(f[2], 10, 64)
			if err == nil {
				held[key] = announced{kind: f[0][1], id: id, start: start}
			}
		case f[0][0] == '-':
			delete(held, key)
		}
	}
	out := make(map[announced]struct{}, len(held))
	for _, a := range held {
		out[a] = struct{}{}
	}
	return out
}

// killAnnounced SIGKILLs the held groups (one kill(-pgid)) and the members
// of the held sessions, skipping any whose leader's number was reused.
func killAnnounced(held map[announced]struct{}) {
	sessions := map[int]bool{}
	for a := range held {
		if st, ok := readProcStat(a.id); ok && st.start != a.start {
			continue // the number now names another process
		}
		if a.kind == 'g' {
			_ = unix.Kill(-a.id, unix.SIGKILL)
		} else {
			sessions[a.id] = true
		}
	}
	if len(sessions) == 0 {
		return
	}
	for _, p := range scanProc() {
		if sessions[p.session] && !p.gone() {
			_ = unix.Kill(p.pid, unix.SIGKILL)
		}
	}
}

// killCgroupTree kills every process in the cgroup dir and beneath it
// (cgroup.kill covers the subtree) and removes the tree, giving it up to
// a second to empty; what is still busy stays for a later sweep. A
// missing dir is nothing to do.
func killCgroupTree(dir string) {
	if err := os.WriteFile(dir+"/cgroup.kill", []byte("1"), 0); errors.Is(err, os.ErrNotExist) {
		return
	}
	for deadline := time.Now().Add(time.Second); removeCgroupTree(dir) != nil && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
}

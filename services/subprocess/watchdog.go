//go:build unix

package subprocess

import (
	"context"
	_ "embed"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// The watchdog is a small process of ours, one per runtime, that kills
// the runtime's ranges when the runtime's process is gone, however it
// ended (SIGKILL, a crash, the OOM killer). It is /bin/sh running
// watchdog.sh (builtins only, an empty environment), started before the
// runtime's first child, in a session of its own and ignoring the terminal
// and termination signals, so that a signal to the harness's process group
// does not take it down first. Its stdin is the read end of a pipe whose
// write end only the runtime holds (close-on-exec: no child inherits it).
// The kernel closes that end when the process exits; the watchdog reads
// EOF and then
//
//   - with cgroup isolation, writes cgroup.kill of the runtime's cgroup
//     directory (every leaf, setsid escapees and nested runtimes included);
//     the empty directories are removed by the next runtime's sweep;
//   - with process groups, SIGKILLs the groups and terminal sessions the
//     runtime announced on the pipe ("+g <pgid> <start>", "+s <sid>
//     <start>") and had not yet retracted ("-g <pgid>", "-s <sid>", sent
//     when the range was observed empty). A group or session whose leader's
//     number is now held by a process with another start time is a reused
//     number and is left alone.
//
// A shell and not this executable again: a re-exec would run every
// package init of the harness first (chroma's lexers above all), costing
// far more CPU and memory at start than the shell does in its whole life,
// for a process that only waits.
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

//go:embed watchdog.sh
var watchdogScript string

// watchdogName is the watchdog's argv[0] (what ps shows).
const watchdogName = "harness-subprocess-watchdog"

// startWatchdog starts the watchdog of a runtime: for the cgroup directory
// dir, or (dir empty) for announced process groups and sessions.
func startWatchdog(dir string, log *slog.Logger) (*watchdog, error) {
	var p [2]int
	if err := pipeCloexec(&p); err != nil {
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
	cmd := &exec.Cmd{Path: "/bin/sh", Args: []string{watchdogName, "-c", watchdogScript, watchdogName, dir},
		Env: []string{}, Dir: "/", Stdin: r, SysProcAttr: &syscall.SysProcAttr{Setsid: true}}
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

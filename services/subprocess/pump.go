//go:build unix

package subprocess

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// A pump moves a handle's collected output and StdinData between the
// child's pipes and the handle, and watches the child's exit. On Linux
// (pump_linux.go) that is all done from the handle's wait goroutine with
// one epoll instance: the pipes and a pidfd of the child. The exit of a child that wrote nothing is then a single
// wakeup, as for a bare os/exec Wait (a copy goroutine per pipe on the
// runtime poller costs several goroutine and thread wakeups per spawn).
//
// A collected stream that turns out to be bulk output (handoffBytes read)
// is handed off to a reader goroutine on the Go runtime poller, which
// moves a fast producer's bytes at about twice the rate of the pump's own
// blocking epoll_wait loop on a 2-core machine (each blocking wait is a
// full syscall exit and P reacquisition; the runtime poller's parked
// reader is woken by a spinning M instead). Short-lived children never get
// that far, so a spawn still costs no goroutine beyond the wait goroutine.
//
// Pipes held open by escaped descendants keep the pump running at most
// Grace after the direct child exited (os/exec WaitDelay semantics): what
// the pipes hold is then drained (closeAll) and their ends are closed;
// output written later is lost by design.
type pump struct {
	streams []pumpStream
	// wake is an eventfd (-1 until the first handoff) that each reader
	// goroutine increments once when its stream ends.
	wake    int
	readers sync.WaitGroup
	// stopping tells reader goroutines that closeAll wants their streams:
	// drain what the pipe holds and end.
	stopping atomic.Bool
}

// pumpStream is one parent pipe end: a collected stream (out) or the
// remaining StdinData (in). The descriptor is non-blocking, close-on-exec
// and not registered with the Go runtime poller until a handoff, which
// moves it into file (fd is then -1).
type pumpStream struct {
	fd   int
	out  *CollectedOutput
	in   []byte
	read int64    //nolint:unused // bytes the pump itself read from fd (Linux's pump)
	file *os.File // the handed-off stream, read by a reader goroutine (kept, closed, after run)
}

// copyBuffers holds the pumps' read buffers: 64 KiB, a Linux pipe's
// default capacity, so one read can drain a full pipe.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// newPumpPipe makes a pipe for a pump: the parent end is a raw non-blocking
// descriptor; the child end is a plain blocking descriptor that only crosses
// the fork. readParent says which end the parent keeps.
func newPumpPipe(readParent bool) (parent, child int, err error) {
	var p [2]int
	if err := pipeCloexec(&p); err != nil {
		return -1, -1, err
	}
	parent, child = p[0], p[1]
	if !readParent {
		parent, child = p[1], p[0]
	}
	// A fresh pipe end's status flags are just its access mode, which
	// F_SETFL ignores: one fcntl instead of SetNonblock's get and set.
	if _, err := unix.FcntlInt(uintptr(parent), unix.F_SETFL, unix.O_NONBLOCK); err != nil {
		_ = unix.Close(parent)
		_ = unix.Close(child)
		return -1, -1, err
	}
	return parent, child, nil
}

func (p *pump) add(s pumpStream) { p.streams = append(p.streams, s) }

// closeAll closes every stream still open (spawn failure, or the end of
// run). Collected output already in a pipe at that moment is read first,
// at most drainMax bytes per stream: what the child wrote before the end is
// kept even when Grace is shorter than the time a reader needed to get to
// it, while a descendant that keeps writing cannot stall the close. A
// handed-off stream's reader is told to do that drain itself (stopping,
// then a deadline that interrupts its blocked Read); closeAll waits for
// every reader goroutine, so no write reaches a CollectedOutput after it
// returns.
func (p *pump) closeAll() {
	p.stopping.Store(true)
	for i := range p.streams {
		if f := p.streams[i].file; f != nil {
			_ = f.SetDeadline(time.Now()) // a read, or (macOS) a StdinData write
		}
	}
	for i := range p.streams {
		if s := &p.streams[i]; s.fd >= 0 && s.out != nil { // still open: the grace deadline, or a failed spawn
			bp := copyBuffers.Get().(*[]byte)
			drain(s.fd, s.out, *bp)
			copyBuffers.Put(bp)
		}
	}
	p.readers.Wait()
	for i := range p.streams {
		if f := p.streams[i].file; f != nil {
			_ = f.Close()
		}
		p.close(i, -1)
	}
}

// drainMax bounds the final drain of one stream: 1 MiB, the largest pipe
// an unprivileged child can ask for (pipe-max-size).
const drainMax = 1 << 20

// drain reads what the non-blocking fd holds now into out, up to drainMax
// bytes, stopping at EAGAIN, end of file or an error.
func drain(fd int, out *CollectedOutput, buf []byte) {
	for total := 0; total < drainMax; {
		n, err := unix.Read(fd, buf)
		if n > 0 {
			_, _ = out.Write(buf[:n])
			total += n
			continue
		}
		if !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

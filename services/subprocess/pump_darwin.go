package subprocess

import (
	"errors"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// On macOS the pump has no epoll, pidfd or eventfd: every stream is a
// goroutine on the Go runtime poller (kqueue) from the start, and the
// child's exit is watched with a kqueue of its own (EVFILT_PROC
// NOTE_EXIT), which also starts the grace period of pipes held open by
// escaped descendants.

// close closes stream i (the epfd argument is Linux's).
func (p *pump) close(i, _ int) {
	fd := p.streams[i].fd
	if fd < 0 {
		return
	}
	_ = unix.Close(fd)
	p.streams[i].fd = -1
}

// run pumps until every stream ended, or until grace after the exit of
// pid. It returns at once when there is nothing to pump. pidfd is
// Linux's (always -1 here).
func (p *pump) run(pid, _ int, grace time.Duration) {
	p.wake = -1
	defer p.closeAll()
	ended := make(chan struct{}, len(p.streams))
	open := 0
	for i := range p.streams {
		s := &p.streams[i]
		if s.out == nil && len(s.in) == 0 {
			p.close(i, -1) // empty StdinData: EOF at once
			continue
		}
		open++
		p.startStream(i, ended)
	}
	if open == 0 {
		return
	}
	w, err := watchExit(pid)
	if err != nil {
		// No watch: the streams alone decide, as without a grace.
		for ; open > 0; open-- {
			<-ended
		}
		return
	}
	defer w.stop()
	exit := w.exited
	var deadline <-chan time.Time
	for open > 0 {
		select {
		case <-ended:
			open--
		case <-exit:
			t := time.NewTimer(grace)
			defer t.Stop()
			deadline, exit = t.C, nil
		case <-deadline:
			return
		}
	}
}

// startStream hands stream i to a goroutine on the runtime poller, which
// reads a collected stream to its end or writes StdinData, then sends on
// ended. closeAll stops a reader as on Linux (stopping, then a read
// deadline) and waits for it.
func (p *pump) startStream(i int, ended chan<- struct{}) {
	s := &p.streams[i]
	f := os.NewFile(uintptr(s.fd), "|pump")
	s.fd, s.file = -1, f
	out, in := s.out, s.in
	p.readers.Add(1)
	go func() {
		defer p.readers.Done()
		defer func() { ended <- struct{}{} }()
		if out == nil {
			_, _ = f.Write(in) // EPIPE from a child that stopped reading ends it too
			_ = f.Close()
			return
		}
		bp := copyBuffers.Get().(*[]byte)
		defer copyBuffers.Put(bp)
		for {
			n, err := f.Read(*bp)
			if n > 0 {
				_, _ = out.Write((*bp)[:n])
			}
			if err == nil {
				continue
			}
			if errors.Is(err, os.ErrDeadlineExceeded) && p.stopping.Load() {
				if rc, err := f.SyscallConn(); err == nil {
					_ = rc.Control(func(fd uintptr) { drain(int(fd), out, *bp) })
				}
			}
			return
		}
	}()
}

// exitWatch is a kqueue that reports the exit of one process.
type exitWatch struct {
	kq     int
	exited chan struct{}
	done   sync.WaitGroup
}

// userWake is the EVFILT_USER event that stops an exitWatch.
const userWake = 1

// watchExit starts watching pid's exit; exited is closed when it exits.
// stop ends the watch.
func watchExit(pid int) (*exitWatch, error) {
	kq, err := unix.Kqueue()
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(kq)
	changes := []unix.Kevent_t{
		{Ident: uint64(pid), Filter: unix.EVFILT_PROC, Flags: unix.EV_ADD | unix.EV_ONESHOT, Fflags: unix.NOTE_EXIT},
		{Ident: userWake, Filter: unix.EVFILT_USER, Flags: unix.EV_ADD | unix.EV_CLEAR},
	}
	w := &exitWatch{kq: kq, exited: make(chan struct{})}
	if _, err := unix.Kevent(kq, changes, nil, nil); err != nil {
		_ = unix.Close(kq)
		if errors.Is(err, unix.ESRCH) { // gone (or a zombie) already
			close(w.exited)
			w.kq = -1
			return w, nil
		}
		return nil, err
	}
	if zombie(pid) {
		// Exited before the registration: no NOTE_EXIT will come.
		_ = unix.Close(kq)
		close(w.exited)
		w.kq = -1
		return w, nil
	}
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		var ev [1]unix.Kevent_t
		for {
			n, err := unix.Kevent(kq, nil, ev[:], nil)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err == nil && n == 1 && ev[0].Filter == unix.EVFILT_PROC {
				close(w.exited)
			}
			return
		}
	}()
	return w, nil
}

// stop wakes the watch's goroutine, waits for it and closes the kqueue.
func (w *exitWatch) stop() {
	if w.kq < 0 {
		return
	}
	_, _ = unix.Kevent(w.kq, []unix.Kevent_t{{Ident: userWake, Filter: unix.EVFILT_USER, Fflags: unix.NOTE_TRIGGER}}, nil, nil)
	w.done.Wait()
	_ = unix.Close(w.kq)
}

// awaitExit blocks until the child pid has exited, without reaping it.
func awaitExit(pid int) error {
	w, err := watchExit(pid)
	if err != nil {
		return err
	}
	<-w.exited
	w.stop()
	return nil
}

// zombie reports whether pid has exited and is not reaped yet (SZOMB in
// its kinfo_proc).
func zombie(pid int) bool {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	return err == nil && kp.Proc.P_stat == szomb
}

// szomb is the process state of a zombie (sys/proc.h).
const szomb = 5

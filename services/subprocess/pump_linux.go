package subprocess

import (
	"encoding/binary"
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// handoffBytes is how much a collected stream may deliver through the pump
// before it is handed off to a reader goroutine: 1 MiB, 16 full pipes.
const handoffBytes = 1 << 20

// pollFallback is how often a pump re-checks the child's exit when no pidfd
// is available (kernels before 5.3).
const pollFallback = 15 * time.Millisecond

// close closes stream i, first removing it from epfd (when >= 0). Closing
// alone would not do: a child forked by a concurrent spawn holds a copy of
// the descriptor until its exec, and while any copy exists epoll keeps
// reporting the stream.
func (p *pump) close(i, epfd int) {
	fd := p.streams[i].fd
	if fd < 0 {
		return
	}
	if epfd >= 0 {
		_ = unix.EpollCtl(epfd, unix.EPOLL_CTL_DEL, fd, nil)
	}
	_ = unix.Close(fd)
	p.streams[i].fd = -1
}

// run pumps until every stream ended, or until grace after the exit of pid.
// It returns at once when there is nothing to pump. pidfd, when ≥ 0, refers
// to pid (a command that is not this process's child); run uses a copy.
func (p *pump) run(pid, pidfd int, grace time.Duration) {
	p.wake = -1
	defer func() {
		p.closeAll()
		if p.wake >= 0 {
			_ = unix.Close(p.wake)
		}
	}()
	open := 0
	for i, s := range p.streams {
		if s.out == nil && len(s.in) == 0 {
			p.close(i, -1) // empty StdinData: EOF at once
		} else {
			open++
		}
	}
	if open == 0 {
		return
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return
	}
	defer unix.Close(epfd)
	for i, s := range p.streams {
		if s.fd < 0 {
			continue
		}
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(i)}
		if s.out == nil {
			ev.Events = unix.EPOLLOUT
		}
		if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, s.fd, &ev); err != nil {
			return
		}
	}
	exitTag := int32(len(p.streams))
	wakeTag := exitTag + 1
	if pidfd >= 0 {
		pidfd, err = unix.FcntlInt(uintptr(pidfd), unix.F_DUPFD_CLOEXEC, 0)
	} else {
		pidfd, err = unix.PidfdOpen(pid, 0)
	}
	if err == nil {
		defer unix.Close(pidfd)
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: exitTag}
		if unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, pidfd, &ev) != nil {
			_ = unix.Close(pidfd)
			pidfd = -1
		}
	} else {
		pidfd = -1
	}

	bp := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(bp)
	var events [8]unix.EpollEvent
	var deadline time.Time // set at the child's exit
	for open > 0 {
		timeout := -1
		switch {
		case !deadline.IsZero():
			left := time.Until(deadline)
			if left <= 0 {
				return
			}
			timeout = int((left + time.Millisecond - 1) / time.Millisecond)
		case pidfd < 0:
			timeout = int(pollFallback / time.Millisecond)
		}
		n, err := unix.EpollWait(epfd, events[:], timeout)
		if err != nil && !errors.Is(err, unix.EINTR) {
			return
		}
		for _, ev := range events[:max(n, 0)] {
			switch ev.Fd {
			case exitTag:
				deadline = time.Now().Add(grace)
				_ = unix.EpollCtl(epfd, unix.EPOLL_CTL_DEL, pidfd, nil)
				continue
			case wakeTag:
				var v [8]byte
				if n, _ := unix.Read(p.wake, v[:]); n == 8 {
					open -= int(binary.NativeEndian.Uint64(v[:]))
				}
				continue
			}
			if p.service(int(ev.Fd), epfd, *bp) {
				open--
			}
			if s := &p.streams[ev.Fd]; s.fd >= 0 && s.read >= handoffBytes {
				p.handoff(int(ev.Fd), epfd, wakeTag)
			}
		}
		if pidfd < 0 && deadline.IsZero() && exited(pid) {
			deadline = time.Now().Add(grace)
		}
	}
}

// service does one read or write on stream i and reports whether that
// ended the stream (false for a stream that stays open or had ended
// already). One operation per wakeup keeps stdout and stderr fair.
func (p *pump) service(i, epfd int, buf []byte) (ended bool) {
	s := &p.streams[i]
	if s.fd < 0 {
		return false
	}
	if s.out != nil {
		n, err := unix.Read(s.fd, buf)
		switch {
		case n > 0:
			s.read += int64(n)
			_, _ = s.out.Write(buf[:n])
			return false
		case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR):
			return false
		}
		p.close(i, epfd) // EOF, or a read error that ends the stream
		return true
	}
	n, err := unix.Write(s.fd, s.in)
	if n > 0 {
		s.in = s.in[n:]
	}
	if len(s.in) > 0 && (err == nil || errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR)) {
		return false
	}
	// All written, or EPIPE from a child that stopped reading: the exit
	// status and output are authoritative, not the stdin copy.
	p.close(i, epfd)
	return true
}

// handoff moves collected stream i from epfd to a reader goroutine on the
// runtime poller. The stream stays counted as open in run until the
// goroutine's increment of p.wake. Without an eventfd the stream simply
// stays with the pump.
func (p *pump) handoff(i, epfd int, wakeTag int32) {
	if p.wake < 0 {
		efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
		if err != nil {
			return
		}
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: wakeTag}
		if unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, efd, &ev) != nil {
			_ = unix.Close(efd)
			return
		}
		p.wake = efd
	}
	s := &p.streams[i]
	if unix.EpollCtl(epfd, unix.EPOLL_CTL_DEL, s.fd, nil) != nil {
		return
	}
	// fd is non-blocking, so NewFile registers it with the runtime
	// poller: Read parks the goroutine rather than an OS thread, and a
	// read deadline (from closeAll, at the grace deadline) interrupts it.
	fd := s.fd
	f := os.NewFile(uintptr(fd), s.out.label)
	s.fd, s.file = -1, f
	out, wake := s.out, p.wake
	p.readers.Add(1)
	go func() {
		defer p.readers.Done()
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
			timedOut := errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, unix.EAGAIN)
			if timedOut && p.stopping.Load() {
				// closeAll's turn: take what the pipe holds, then end.
				// (A Read past the deadline returns before reading.)
				if rc, err := f.SyscallConn(); err == nil {
					_ = rc.Control(func(fd uintptr) { drain(int(fd), out, *bp) })
				}
				break
			}
			if errors.Is(err, unix.EAGAIN) {
				// The poller refused the descriptor (epoll watch limit):
				// it stays non-blocking, so wait for input here, in
				// slices short enough to see closeAll's stopping.
				_, _ = unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 50)
				continue
			}
			break // end of file, or a read error that ends the stream
		}
		_, _ = unix.Write(wake, binary.NativeEndian.AppendUint64(nil, 1))
	}()
}

// awaitExit blocks until the child pid has exited, without reaping it.
func awaitExit(pid int) error {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// exited reports, without reaping it, whether the child pid has exited.
func exited(pid int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return err != nil || info.Signo != 0
}

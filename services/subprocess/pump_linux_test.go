package subprocess

import (
	"bytes"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestFinalDrain: at the end of a pump (the grace deadline), output already
// in a pipe is collected before the pipe is closed, both for a stream the
// pump reads itself and for one handed off to a reader goroutine that is
// still busy with its previous chunk. The write end stays open, as when a
// descendant holds it, so only the drain can see those bytes.
func TestFinalDrain(t *testing.T) {
	for _, handed := range []bool{false, true} {
		name := "pump"
		if handed {
			name = "handed-off"
		}
		t.Run(name, func(t *testing.T) {
			r, w, err := newPumpPipe(true)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(w)
			out := newCollectedOutput("stdout", 1<<20, 0, nil)
			p := &pump{wake: -1}
			p.add(pumpStream{fd: r, out: out})
			write := func(b []byte) {
				if n, err := unix.Write(w, b); n != len(b) || err != nil {
					t.Fatalf("write: %d, %v", n, err)
				}
			}
			first, second := bytes.Repeat([]byte("a"), 1000), bytes.Repeat([]byte("b"), 40000)
			if !handed {
				write(first)
				write(second)
				p.closeAll()
			} else {
				epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
				if err != nil {
					t.Fatal(err)
				}
				defer unix.Close(epfd)
				ev := unix.EpollEvent{Events: unix.EPOLLIN}
				if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, r, &ev); err != nil {
					t.Fatal(err)
				}
				// Hold the output's lock: the reader blocks in Write with
				// the first chunk while the second waits in the pipe.
				out.mu.Lock()
				p.handoff(0, epfd, 1)
				if p.streams[0].file == nil {
					t.Fatal("not handed off")
				}
				write(first)
				for unread(t, r) > 0 {
					runtime.Gosched() // the reader has not taken the first chunk yet
				}
				write(second)
				done := make(chan struct{})
				go func() { p.closeAll(); close(done) }()
				for !p.stopping.Load() {
					runtime.Gosched()
				}
				out.mu.Unlock()
				<-done
				_ = unix.Close(p.wake)
			}
			if want := int64(len(first) + len(second)); out.Total() != want {
				t.Fatalf("collected %d bytes, want %d", out.Total(), want)
			}
		})
	}
}

// unread is how many bytes the pipe read end fd holds.
func unread(t *testing.T, fd int) int {
	n, err := unix.IoctlGetInt(fd, unix.TIOCINQ) // FIONREAD
	if err != nil {
		t.Fatal(err)
	}
	return n
}

//go:build windows

package subprocess

import (
	"os"
	"sync"
	"time"

	"golang.org/x/sys/windows"
)

// On Windows the pump is a goroutine per stream doing blocking reads (or
// the StdinData write) on an anonymous pipe, and the child's exit is
// watched through its process handle, which also starts the grace period
// of pipes held open by other processes of the command's job. Anonymous
// pipes have no deadlines: a stream still open when the grace ends is
// stopped with CancelIoEx on its handle. Not run on Windows by our tests.
type pump struct {
	streams []pumpStream
	readers sync.WaitGroup
	mu      sync.Mutex // guards each stream's file once run started
}

// pumpStream is one parent pipe end: a collected stream (out) or the
// remaining StdinData (in). fd is the pipe handle until run wraps it in
// file (fd is then -1).
type pumpStream struct {
	fd   int
	out  *CollectedOutput
	in   []byte
	file *os.File
}

// newPumpPipe makes an anonymous pipe; readParent says which end the
// parent keeps. os/exec makes the child's end inheritable when it starts
// the child.
func newPumpPipe(readParent bool) (parent, child int, err error) {
	var r, w windows.Handle
	if err := windows.CreatePipe(&r, &w, nil, 0); err != nil {
		return -1, -1, err
	}
	if readParent {
		return int(r), int(w), nil
	}
	return int(w), int(r), nil
}

func (p *pump) add(s pumpStream) { p.streams = append(p.streams, s) }

// run pumps until every stream ended, or until grace after the exit of
// pid; it returns once the exit watch ended too.
func (p *pump) run(pid, _ int, grace time.Duration) {
	defer p.closeAll()
	ended := make(chan struct{}, len(p.streams))
	open := 0
	p.mu.Lock()
	for i := range p.streams {
		s := &p.streams[i]
		s.file, s.fd = os.NewFile(uintptr(s.fd), "|pump"), -1
		if s.out == nil && len(s.in) == 0 {
			_ = s.file.Close() // empty StdinData: EOF at once
			s.file = nil
			continue
		}
		open++
		p.readers.Add(1)
		go p.stream(s, ended)
	}
	p.mu.Unlock()
	if open == 0 {
		return
	}
	exited, watched := watchProcessExit(pid)
	defer func() { <-watched }()
	var deadline <-chan time.Time
	for open > 0 {
		select {
		case <-ended:
			open--
		case <-exited:
			exited = nil
			t := time.NewTimer(grace)
			defer t.Stop()
			deadline = t.C
		case <-deadline:
			return
		}
	}
}

// stream moves one stream until its end (or a cancelled read or write).
func (p *pump) stream(s *pumpStream, ended chan<- struct{}) {
	defer p.readers.Done()
	defer func() { ended <- struct{}{} }()
	if s.out == nil {
		_, _ = s.file.Write(s.in)
		p.mu.Lock()
		_ = s.file.Close() // EOF for the child
		s.file = nil
		p.mu.Unlock()
		return
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := s.file.Read(buf)
		if n > 0 {
			_, _ = s.out.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// closeAll cancels every read or write still pending, waits for the
// stream goroutines and closes what is still open (also for a spawn that
// failed before run).
func (p *pump) closeAll() {
	p.mu.Lock()
	for i := range p.streams {
		s := &p.streams[i]
		if s.file != nil {
			_ = windows.CancelIoEx(windows.Handle(s.file.Fd()), nil)
		}
	}
	p.mu.Unlock()
	p.readers.Wait()
	for i := range p.streams {
		s := &p.streams[i]
		if s.file != nil {
			_ = s.file.Close()
			s.file = nil
		}
		if s.fd >= 0 {
			_ = windows.CloseHandle(windows.Handle(s.fd))
			s.fd = -1
		}
	}
}

// watchProcessExit closes exited when process pid exits, and watched once
// the watch itself ended (immediately when pid cannot be opened: the
// streams alone then decide).
func watchProcessExit(pid int) (exited, watched <-chan struct{}) {
	ex, wd := make(chan struct{}), make(chan struct{})
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		close(wd)
		return ex, wd
	}
	go func() {
		defer close(wd)
		defer func() { _ = windows.CloseHandle(h) }()
		if ev, err := windows.WaitForSingleObject(h, windows.INFINITE); err == nil && ev == windows.WAIT_OBJECT_0 {
			close(ex)
		}
	}()
	return ex, wd
}

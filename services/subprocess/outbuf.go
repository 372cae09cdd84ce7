//go:build unix

package subprocess

import (
	"context"
	"io"
	"sync"
)

// outBuf is a terminal's ordered output queue between the PTY reader and
// the consumer. While the program runs, a full queue stops the reader (the
// program then blocks on a full PTY: backpressure); once the program exited
// or termination began, the queue accepts up to hardLimit more and drops
// beyond that so teardown never waits for a consumer.
type outBuf struct {
	mu      sync.Mutex
	data    []byte
	ended   bool
	free    bool
	dropped int64
	changed chan struct{}
	limit   int
}

func newOutBuf(limit int) *outBuf { return &outBuf{limit: limit, changed: make(chan struct{})} }

func (b *outBuf) signalLocked() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// push queues p, waiting for room while backpressure applies; stop aborts
// the wait (the bytes are then dropped).
func (b *outBuf) push(p []byte, stop <-chan struct{}) {
	for {
		b.mu.Lock()
		if b.ended {
			b.mu.Unlock()
			return
		}
		if len(b.data) < b.limit || b.free {
			if b.free && len(b.data)+len(p) > 4*b.limit {
				b.dropped += int64(len(p))
			} else {
				b.data = append(b.data, p...)
				b.signalLocked()
			}
			b.mu.Unlock()
			return
		}
		ch := b.changed
		b.mu.Unlock()
		select {
		case <-ch:
		case <-stop:
			b.setFree()
		}
	}
}

// setFree lifts backpressure for good.
func (b *outBuf) setFree() {
	b.mu.Lock()
	b.free = true
	b.signalLocked()
	b.mu.Unlock()
}

// end marks the stream complete: readers get io.EOF after the queued bytes.
func (b *outBuf) end() {
	b.mu.Lock()
	b.ended = true
	b.signalLocked()
	b.mu.Unlock()
}

func (b *outBuf) read(ctx context.Context, p []byte) (int, error) {
	for {
		b.mu.Lock()
		if len(b.data) > 0 {
			n := copy(p, b.data)
			b.data = b.data[n:]
			if len(b.data) == 0 {
				b.data = nil
			}
			b.signalLocked()
			b.mu.Unlock()
			return n, nil
		}
		if b.ended {
			b.mu.Unlock()
			return 0, io.EOF
		}
		ch := b.changed
		b.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return 0, context.Cause(ctx)
		}
	}
}

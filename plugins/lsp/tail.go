package lsp

import (
	"io"
	"strings"
	"sync"
)

// tail keeps the last max bytes of a server's stderr, for error messages.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTail(maxBytes int) *tail { return &tail{max: maxBytes} }

// drain copies r into the tail until r ends.
func (t *tail) drain(r io.Reader) {
	p := make([]byte, 4096)
	for {
		n, err := r.Read(p)
		t.write(p[:n])
		if err != nil {
			return
		}
	}
}

func (t *tail) write(p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
}

// String returns the kept bytes, trimmed and valid UTF-8.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(strings.ToValidUTF8(string(t.buf), ""))
}

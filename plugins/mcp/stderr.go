package mcp

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"unicode/utf8"
)

// tail keeps the last max bytes written to it. Memory stays at most max
// bytes (plus one read buffer) however much a server writes.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func newTail(max int) *tail { return &tail{max: max} }

// Write appends p, dropping the oldest bytes beyond max. It never fails.
func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// String returns the kept bytes, trimmed, starting at a line boundary when
// the tail was cut and never inside a UTF-8 sequence.
func (t *tail) String() string {
	t.mu.Lock()
	b := bytes.Clone(t.buf)
	full := len(t.buf) >= t.max
	t.mu.Unlock()
	if full {
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
		for len(b) > 0 && !utf8.RuneStart(b[0]) {
			b = b[1:]
		}
	}
	return strings.TrimSpace(string(b))
}

// drain copies r into t and, line by line, to the debug log until r ends.
// Lines longer than 4 KiB reach the log truncated; t gets every byte.
func drain(r io.Reader, t *tail, log *slog.Logger, server string) {
	br := bufio.NewReaderSize(r, 4096)
	debug := log.Enabled(context.Background(), slog.LevelDebug)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			_, _ = t.Write(line)
			if debug {
				log.Debug("mcp server stderr", "server", server, "line", strings.TrimRight(string(line), "\n"))
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return
		}
	}
}

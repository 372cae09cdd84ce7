package subprocess

import (
	"os"
	"sync"
	"unicode/utf8"
)

// OutputRead is one non-consuming read of a collected stream (dsh readFrom).
type OutputRead struct {
	// Text holds the retained bytes from the requested offset on. No
	// multi-byte UTF-8 sequence is split at either edge: leading continuation
	// bytes cut off by the window are skipped, and while the stream is still
	// open an incomplete trailing sequence is held back (NextOffset then points
	// at its first byte). Invalid bytes inside the text pass through unchanged.
	Text string
	// NextOffset is the byte offset (in the whole stream) to pass to the next
	// ReadFrom. It equals the stream's total once the stream is sealed.
	NextOffset int64
	// Lossy is true when bytes between the requested offset and the start of
	// the retained tail were dropped from memory; Text is then the whole tail.
	// ReadFrom(0).Lossy is exactly "truncated".
	Lossy bool
	// SpillPath is the private file holding the complete stream, present
	// while such a file exists and is intact.
	SpillPath string
}

// CollectedOutput is a stream captured in collect mode: a tail of exactly
// MaxBytes in memory plus, when spill is configured and the tail overflowed,
// the complete stream in a private file (until the spill cap, past which the
// now-incomplete file is deleted and SpillCapped reports true). Memory stays
// bounded by MaxBytes however much the child writes. All methods are safe for
// concurrent use, never consume anything, and keep working after the process
// exits.
type CollectedOutput struct {
	mu        sync.Mutex
	label     string
	max       int64
	buf       []byte // linear until len==max, then a ring whose oldest byte is buf[head]
	head      int
	total     int64
	spillMax  int64 // 0: no spill file at all (diagnostic tail)
	spillOff  bool
	capped    bool
	spill     *os.File
	spillPath string
	spillErr  error
	sealed    bool
	open      func(label string) (*os.File, string, error)
}

func newCollectedOutput(label string, maxBytes, spillMax int64, open func(string) (*os.File, string, error)) *CollectedOutput {
	return &CollectedOutput{label: label, max: maxBytes, spillMax: spillMax, spillOff: spillMax <= 0, open: open}
}

// Write appends p to the stream. It never fails: spill-file errors disable
// spilling (SpillErr reports them) and the in-memory tail keeps working.
func (c *CollectedOutput) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sealed || len(p) == 0 {
		return len(p), nil
	}
	c.total += int64(len(p))
	if !c.spillOff && (c.spill != nil || int64(len(c.buf))+int64(len(p)) > c.max) {
		c.spillAll(p)
	}
	c.keep(p)
	return len(p), nil
}

// spillAll mirrors the stream into the spill file, creating it (with every
// byte retained so far, which is the whole stream at the first overflow) on
// first use, and discarding it for good once the total passes the cap.
func (c *CollectedOutput) spillAll(p []byte) {
	if c.total > c.spillMax {
		c.capped = true
		c.dropSpill()
		return
	}
	if c.spill == nil {
		f, path, err := c.open(c.label)
		if err != nil {
			c.spillErr, c.spillOff = err, true
			return
		}
		c.spill, c.spillPath = f, path
		a, b := c.retained()
		_, err = f.Write(a)
		if err == nil {
			_, err = f.Write(b)
		}
		if err != nil {
			c.spillErr = err
			c.dropSpill()
			return
		}
	}
	if _, err := c.spill.Write(p); err != nil {
		c.spillErr = err
		c.dropSpill()
	}
}

func (c *CollectedOutput) dropSpill() {
	if c.spill != nil {
		_ = c.spill.Close()
		_ = os.Remove(c.spillPath)
	}
	c.spill, c.spillPath, c.spillOff = nil, "", true
}

// keep appends p to the bounded tail; the window is byte-exact at the cap.
func (c *CollectedOutput) keep(p []byte) {
	limit := int(c.max)
	if len(p) >= limit {
		if cap(c.buf) < limit {
			c.buf = make([]byte, limit)
		}
		c.buf = c.buf[:limit]
		copy(c.buf, p[len(p)-limit:])
		c.head = 0
		return
	}
	if len(c.buf) < limit {
		room := limit - len(c.buf)
		n := min(room, len(p))
		if cap(c.buf)-len(c.buf) < n {
			nc := min(limit, max(2*cap(c.buf), len(c.buf)+n, 4096))
			nb := make([]byte, len(c.buf), nc)
			copy(nb, c.buf)
			c.buf = nb
		}
		c.buf = append(c.buf, p[:n]...)
		p = p[n:]
		if len(p) == 0 {
			return
		}
	}
	n := copy(c.buf[c.head:], p)
	copy(c.buf, p[n:])
	c.head = (c.head + len(p)) % limit
}

// retained returns the tail in order as two slices.
func (c *CollectedOutput) retained() ([]byte, []byte) {
	return c.buf[c.head:], c.buf[:c.head]
}

// seal ends the stream: later writes are ignored and the spill file is
// closed; a failed close withdraws the path (the file may lack its end).
func (c *CollectedOutput) seal() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sealed {
		return
	}
	c.sealed = true
	if c.spill != nil {
		if err := c.spill.Close(); err != nil {
			c.spillErr, c.spillPath = err, ""
		}
		c.spill = nil
	}
}

// ReadFrom returns the retained bytes from offset on without consuming them
// (reference A5). Offsets count bytes of the whole stream from 0.
func (c *CollectedOutput) ReadFrom(offset int64) OutputRead {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, b := c.retained()
	kept := int64(len(a) + len(b))
	windowStart := c.total - kept
	r := OutputRead{Lossy: offset < windowStart, SpillPath: c.spillPath}
	start := int64(0)
	if !r.Lossy {
		start = min(offset-windowStart, kept)
	}
	out := make([]byte, 0, kept-start)
	if start < int64(len(a)) {
		out = append(append(out, a[start:]...), b...)
	} else {
		out = append(out, b[start-int64(len(a)):]...)
	}
	if windowStart+start > 0 {
		skip := 0
		for skip < len(out) && skip < utf8.UTFMax-1 && !utf8.RuneStart(out[skip]) {
			skip++
		}
		out = out[skip:]
	}
	held := 0
	if !c.sealed {
		held = incompleteSuffix(out)
		out = out[:len(out)-held]
	}
	r.Text = string(out)
	r.NextOffset = c.total - int64(held)
	return r
}

// incompleteSuffix is the length of a trailing UTF-8 sequence that has a
// valid start byte but is not complete yet.
func incompleteSuffix(p []byte) int {
	for i := 1; i <= utf8.UTFMax-1 && i <= len(p); i++ {
		b := p[len(p)-i]
		if utf8.RuneStart(b) {
			if b >= 0xC0 && !utf8.FullRune(p[len(p)-i:]) {
				return i
			}
			return 0
		}
	}
	return 0
}

// Text is ReadFrom(0).Text: the retained tail.
func (c *CollectedOutput) Text() string { return c.ReadFrom(0).Text }

// Total is the number of bytes the child wrote to the stream.
func (c *CollectedOutput) Total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// MaxBytes is the in-memory tail bound in bytes.
func (c *CollectedOutput) MaxBytes() int64 { return c.max }

// Truncated reports whether the tail lost its head (Total > MaxBytes).
func (c *CollectedOutput) Truncated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total > c.max
}

// SpillPath is the complete-stream file, or "" when none exists (the stream
// fit in memory, spill was not configured, or the file was discarded).
func (c *CollectedOutput) SpillPath() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.spillPath
}

// SpillCapped reports that the stream passed its spill cap, so no complete
// copy exists: renderers say "spill capped".
func (c *CollectedOutput) SpillCapped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.capped
}

// SpillErr is the first error met creating or writing the spill file, if
// any; spilling stopped there.
func (c *CollectedOutput) SpillErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.spillErr
}

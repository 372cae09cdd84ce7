package tools

import (
	"context"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Progress is one report of a running call: how its output looks so far.
// Each report carries the whole tail, so a later one supersedes an earlier
// one and a dropped report loses nothing for good.
type Progress struct {
	// CallID is the model's tool-call id; Name the tool.
	CallID string
	Name   string
	// Tail is the end of the output so far: at most [MaxProgressTail]
	// bytes, starting after a newline when one lies in its first half, and
	// never splitting a UTF-8 sequence at its start. It is a copy: it
	// never pins the tool's own buffers.
	Tail string
	// Bytes counts the output bytes the call produced so far (every stream).
	Bytes int64
}

// Bounds of progress reports.
const (
	// MaxProgressTail bounds Progress.Tail, in bytes.
	MaxProgressTail = 2048
	// ProgressInterval is the least time between two reports of one call
	// that reach the sink; reports in between are dropped.
	ProgressInterval = 100 * time.Millisecond
)

type progressKey struct{}

// WithProgress returns a context under which tool calls report their
// progress to sink (the agent turns the reports into events). Each call's
// reports reach sink at most once per [ProgressInterval] and only when its
// output grew, with Tail bounded by [MaxProgressTail], so a tool that
// writes without pause can neither flood sink nor grow memory. sink runs
// on the reporting tool's goroutine, concurrently for parallel calls: it
// must be quick and safe for concurrent use.
func WithProgress(ctx context.Context, sink func(Progress)) context.Context {
	return context.WithValue(ctx, progressKey{}, sink)
}

// ProgressReporter reports the progress of one call. A nil reporter (no
// sink in the call's context) ignores reports. Safe for concurrent use.
type ProgressReporter struct {
	sink         func(Progress)
	callID, name string
	now          func() time.Time

	mu        sync.Mutex
	sent      bool
	last      time.Time
	lastBytes int64
}

// ProgressOf returns the reporter of e's call under ctx (the body's
// context), or nil when ctx carries no sink ([WithProgress]). A body
// reports only while it runs: a report after the body returned may
// arrive after the call's result.
func ProgressOf(ctx context.Context, e *Execution) *ProgressReporter {
	sink, _ := ctx.Value(progressKey{}).(func(Progress))
	if sink == nil || e == nil {
		return nil
	}
	return &ProgressReporter{sink: sink, callID: e.CallID(), name: e.Name(), now: time.Now}
}

// Report offers the output so far: tail is its end (any length: only the
// last [MaxProgressTail] bytes are kept) and bytes the total produced. The
// report reaches the sink unless the previous delivered one is less than
// [ProgressInterval] old or bytes did not grow since; Report says whether
// it did.
func (r *ProgressReporter) Report(tail string, bytes int64) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	now := r.now()
	if r.sent && (bytes <= r.lastBytes || now.Sub(r.last) < ProgressInterval) {
		r.mu.Unlock()
		return false
	}
	r.sent, r.last, r.lastBytes = true, now, bytes
	r.mu.Unlock()
	r.sink(Progress{CallID: r.callID, Name: r.name, Tail: boundTail(tail), Bytes: bytes})
	return true
}

// boundTail is a private copy of the last MaxProgressTail bytes of s,
// cut at a rune start, and after a newline when one lies in the first half.
func boundTail(s string) string {
	if len(s) <= MaxProgressTail {
		return strings.Clone(s)
	}
	s = s[len(s)-MaxProgressTail:]
	for i := 0; i < utf8.UTFMax && i < len(s) && !utf8.RuneStart(s[0]); i++ {
		s = s[1:]
	}
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < MaxProgressTail/2 {
		s = s[i+1:]
	}
	return strings.Clone(s)
}

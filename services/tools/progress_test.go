package tools_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/dshgo/harness/services/tools"
)

// TestProgressIsRateLimitedAndBounded: a body reporting without pause
// reaches the sink at most once per ProgressInterval of its clock, only
// when its output grew, and each delivered tail is a private copy of at
// most MaxProgressTail bytes that starts at a line and at a rune.
func TestProgressIsRateLimitedAndBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var (
		mu  sync.Mutex
		got []tools.Progress
	)
	big := strings.Repeat("é", tools.MaxProgressTail) + "\nline-a\n" + strings.Repeat("x", 300) + "\nlast line"
	var delivered []bool
	e.register(tools.Define("flood", "Reports progress.", func(ctx context.Context, ex *tools.Execution, _ struct{}) (string, error) {
		r := tools.ProgressOf(ctx, ex)
		if r == nil {
			return "", nil
		}
		clock := time.Unix(1000, 0)
		tools.SetProgressClock(r, func() time.Time { return clock })
		step := func(d time.Duration, tail string, n int64) {
			clock = clock.Add(d)
			delivered = append(delivered, r.Report(tail, n))
		}
		step(0, "one\n", 4)    // first report: delivered
		for i := range 10000 { // a flood within the interval: dropped
			step(0, "flood", int64(5+i))
		}
		step(tools.ProgressInterval-time.Nanosecond, "x", 20000) // still within: dropped
		step(time.Nanosecond, big, 30000)                        // interval passed, output grew: delivered
		step(tools.ProgressInterval, "same", 30000)              // no growth: dropped
		step(0, "more", 30001)                                   // grew, the interval since the last delivery passed: delivered
		step(tools.ProgressInterval/2, "third", 30002)           // within the interval: dropped
		step(tools.ProgressInterval/2, "fourth\n", 30003)        // delivered
		return "done", nil
	}))
	ctx := tools.WithProgress(context.Background(), func(p tools.Progress) {
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
	})
	o := e.reg.Execute(ctx, tools.Call{ID: "c9", Name: "flood", Arguments: "{}"})
	if o.IsError {
		t.Fatalf("flood: %s", text(o))
	}
	if len(got) != 4 {
		t.Fatalf("%d reports reached the sink, want 4: %+v", len(got), got)
	}
	if n := len(delivered); n != 10007 || !delivered[0] || delivered[1] || !delivered[10002] || !delivered[10004] || delivered[10005] || !delivered[10006] {
		t.Fatalf("Report results: %d calls, first %v", n, delivered[:2])
	}
	if p := got[0]; p.CallID != "c9" || p.Name != "flood" || p.Tail != "one\n" || p.Bytes != 4 {
		t.Errorf("first report %+v", p)
	}
	p := got[1]
	if len(p.Tail) > tools.MaxProgressTail || p.Bytes != 30000 {
		t.Fatalf("second report: %d tail bytes (max %d), bytes %d", len(p.Tail), tools.MaxProgressTail, p.Bytes)
	}
	if want := strings.Repeat("x", 300) + "\nlast line"; !strings.HasSuffix(p.Tail, want) || strings.ContainsRune(p.Tail, '\uFFFD') {
		t.Errorf("the tail does not end with the output's end, or splits a rune: %q", p.Tail)
	}
	if !strings.HasPrefix(p.Tail, "é") && !strings.HasPrefix(p.Tail, "line-a") {
		t.Errorf("the tail starts inside a rune: %q", p.Tail[:8])
	}
	if start, end := uintptr(unsafe.Pointer(unsafe.StringData(big))), uintptr(unsafe.Pointer(unsafe.StringData(big)))+uintptr(len(big)); uintptr(unsafe.Pointer(unsafe.StringData(p.Tail))) >= start && uintptr(unsafe.Pointer(unsafe.StringData(p.Tail))) < end {
		t.Errorf("the delivered tail shares the tool's buffer")
	}
	if got[2].Tail != "more" || got[3].Tail != "fourth\n" || got[3].Bytes != 30003 {
		t.Errorf("last reports %+v", got[2:])
	}
	// Without a sink there is no reporter, and a nil reporter ignores reports.
	var none *tools.ProgressReporter
	if none.Report("x", 1) {
		t.Error("a nil reporter delivered")
	}
	e.register(tools.Define("quiet", "No sink.", func(ctx context.Context, ex *tools.Execution, _ struct{}) (string, error) {
		if tools.ProgressOf(ctx, ex) != nil {
			return "", context.Canceled
		}
		return "ok", nil
	}))
	if o := e.exec("quiet", "{}"); o.IsError {
		t.Errorf("a call without a sink got a reporter: %s", text(o))
	}
}

// TestProgressTailStartsAtALine: a long tail whose first half holds a
// newline starts right after it.
func TestProgressTailStartsAtALine(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var got tools.Progress
	out := strings.Repeat("a", 5000) + "\n" + strings.Repeat("b", tools.MaxProgressTail-100)
	e.register(tools.Define("once", "Reports once.", func(ctx context.Context, ex *tools.Execution, _ struct{}) (string, error) {
		tools.ProgressOf(ctx, ex).Report(out, int64(len(out)))
		return "", nil
	}))
	ctx := tools.WithProgress(context.Background(), func(p tools.Progress) { got = p })
	e.reg.Execute(ctx, tools.Call{ID: "c1", Name: "once", Arguments: "{}"})
	if got.Tail != strings.Repeat("b", tools.MaxProgressTail-100) {
		t.Fatalf("tail of %d bytes starting %q", len(got.Tail), got.Tail[:min(10, len(got.Tail))])
	}
}

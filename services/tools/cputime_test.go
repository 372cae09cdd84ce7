package tools

import (
	"runtime"
	"testing"
)

// CPUTimer reports, next to the wall-clock ns/op, the CPU time the benchmark
// goroutine's thread spent per op ("cpu-ns/op"). On a shared machine the
// wall clock includes time the thread spent waiting for a core; the thread's
// CPU time does not. Call the returned stop function after the loop.
func CPUTimer(b *testing.B) (stop func()) {
	runtime.LockOSThread()
	start := threadCPU()
	return func() {
		used := threadCPU() - start
		runtime.UnlockOSThread()
		if b.N > 0 {
			b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
		}
	}
}

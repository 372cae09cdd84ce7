//go:build !linux

package instructions_test

import "time"

// threadCPU is unavailable off Linux (no RUSAGE_THREAD): benchmarks then
// report no cpu-ns/op.
func threadCPU() (time.Duration, bool) { return 0, false }

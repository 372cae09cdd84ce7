//go:build unix

package tokenmeter

import (
	"syscall"
	"time"
)

// processCPU returns the user+system CPU time of the process. Benchmarks
// report MB/s per CPU second as "cpu-MB/s" besides the wall-clock MB/s,
// because the machines they run on are shared and wall time overstates the
// cost under load.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

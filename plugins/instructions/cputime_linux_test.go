package instructions_test

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU returns the CPU time (user+system) consumed by the calling OS
// thread.
func threadCPU() (time.Duration, bool) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

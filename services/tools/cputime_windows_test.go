//go:build windows

package tools

import (
	"time"

	"golang.org/x/sys/windows"
)

// threadCPU is the process's user+system CPU time: Windows has no per-thread figure here
// (GetProcessTimes).
func threadCPU() time.Duration {
	var creation, exit, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(windows.CurrentProcess(), &creation, &exit, &kernel, &user); err != nil {
		return 0
	}
	return time.Duration(uint64(kernel.HighDateTime)<<32|uint64(kernel.LowDateTime))*100 +
		time.Duration(uint64(user.HighDateTime)<<32|uint64(user.LowDateTime))*100
}

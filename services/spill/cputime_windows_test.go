//go:build windows

package spill

import (
	"time"

	"golang.org/x/sys/windows"
)

// processCPU returns the process's user+system CPU time; benchmarks report
// MB/s per CPU second besides wall-clock MB/s because the machine is shared.
func processCPU() time.Duration {
	var creation, exit, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(windows.CurrentProcess(), &creation, &exit, &kernel, &user); err != nil {
		return 0
	}
	return filetimeDuration(kernel) + filetimeDuration(user)
}

// filetimeDuration converts a FILETIME duration (100 ns units).
func filetimeDuration(ft windows.Filetime) time.Duration {
	return time.Duration(uint64(ft.HighDateTime)<<32|uint64(ft.LowDateTime)) * 100
}

//go:build windows

package harnesstest

import (
	"time"

	"golang.org/x/sys/windows"
)

// processCPU is this process's user+system CPU time (GetProcessTimes).
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

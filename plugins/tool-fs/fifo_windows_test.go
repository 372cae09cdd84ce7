//go:build windows

package toolfs

import "os"

// mkfifo makes a directory: Windows has no FIFO in the file system, and a
// directory gets the same refusal (not a regular file).
func mkfifo(path string) error { return os.Mkdir(path, 0o700) }

//go:build !unix

package permission

import "os"

// linkCount is the number of hard links of the file (1 when unknown).
func linkCount(os.FileInfo) uint64 { return 1 }

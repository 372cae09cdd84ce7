//go:build windows

package subprocess

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks for leaked goroutines; the process tests of this package
// are Unix-only (they run sh and read /proc), so on Windows only the
// platform-independent ones run.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Package sandboxtest holds test helpers around the sandbox backends.
package sandboxtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// LoggingBwrap writes a bwrap into a new temporary directory that appends
// its arguments, one line per run, to a log and then execs the real bwrap
// found on PATH. It returns the directory (put it first on the PATH of
// whatever should use it) and a function that counts the runs so far.
// Without bwrap it fails the test when the environment variable CI is
// set, and skips it otherwise.
func LoggingBwrap(tb testing.TB) (dir string, runs func() int) {
	tb.Helper()
	real, err := exec.LookPath("bwrap")
	if err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("bwrap not installed in CI: %v", err)
		}
		tb.Skipf("bwrap not installed: %v", err)
	}
	dir, log := tb.TempDir(), filepath.Join(tb.TempDir(), "bwrap.log")
	script := "#!/bin/sh\necho \"$*\" >> '" + log + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "bwrap"), []byte(script), 0o755); err != nil {
		tb.Fatal(err)
	}
	return dir, func() int {
		b, err := os.ReadFile(log)
		if err != nil && !os.IsNotExist(err) {
			tb.Fatal(err)
		}
		return strings.Count(string(b), "\n")
	}
}

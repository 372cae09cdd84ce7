package acp_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	code := func() int {
		defer func() {
			if binDir != "" {
				_ = os.RemoveAll(binDir)
			}
		}()
		return runVerified(m)
	}()
	os.Exit(code)
}

// runVerified runs the tests and fails the run on leaked goroutines.
func runVerified(m *testing.M) int {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "acp: leaked goroutines:", err)
			return 1
		}
	}
	return code
}

var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

// harnessBinary builds the real harness command (./cmd/harness) once per
// run, on first use.
func harnessBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "harness-acp-bin-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "harness")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/harness")
		cmd.Dir = filepath.Join("..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build ./cmd/harness: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

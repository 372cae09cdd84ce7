package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

// suiteDir holds what the whole run shares: the harness binary and the
// sandbox's cache root (so the Go standard library compiles once per run,
// not once per case). It is outside /tmp when it can be, as a user's home
// and projects are: bwrap replaces /tmp with a private tmpfs.
var suiteDir string

func TestMain(m *testing.M) {
	code := run(m)
	os.Exit(code)
}

func run(m *testing.M) int {
	base := os.TempDir()
	if st, err := os.Stat("/var/tmp"); err == nil && st.IsDir() {
		base = "/var/tmp"
	}
	dir, err := os.MkdirTemp(base, "harness-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	suiteDir = dir
	defer func() {
		// Go makes module cache files read-only: make them removable.
		_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(p, 0o755)
			}
			return nil
		})
		_ = os.RemoveAll(dir)
	}()
	if err := goleak.Find(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: goroutines before the tests:", err)
		return 1
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: leaked goroutines:", err)
			return 1
		}
	}
	return code
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// harnessBinary builds the real harness command (./cmd/harness) once per
// run, on first use.
func harnessBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binPath = filepath.Join(suiteDir, "bin", "harness")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/harness")
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build ./cmd/harness: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

package sandboxtest_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/dshgo/harness/internal/sandboxtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The logging bwrap runs the real one and counts each run.
func TestLoggingBwrapCountsRuns(t *testing.T) {
	dir, runs := sandboxtest.LoggingBwrap(t)
	if n := runs(); n != 0 {
		t.Fatalf("%d runs before any", n)
	}
	for i := 1; i <= 2; i++ {
		out, err := exec.Command(dir+"/bwrap", "--version").CombinedOutput()
		if err != nil {
			t.Fatalf("bwrap --version: %v\n%s", err, out)
		}
		if n := runs(); n != i {
			t.Fatalf("%d runs after %d", n, i)
		}
	}
	if _, err := os.Stat(dir + "/bwrap"); err != nil {
		t.Fatal(err)
	}
}

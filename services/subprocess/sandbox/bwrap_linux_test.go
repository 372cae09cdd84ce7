package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// sleepsWith lists the live processes whose command line is exactly
// "sleep m".
func sleepsWith(m string) []int {
	return procsWhere(func(args []string) bool { return len(args) == 2 && args[0] == "sleep" && args[1] == m })
}

// TestRunProbeDoesNotWaitForAGrandchildHoldingStderr: a probe command
// that exits 0 while a child it left behind keeps the probe's stderr open
// (as bwrap's sandbox init can after bwrap exited) is a success, and the
// run returns once the command exited and probeWaitDelay passed, not when
// the holder lets go 30 s later: before a 5 s context (the stop timeout
// the probe must not wait out) ends. Without exec's WaitDelay the run
// waits for the holder; with ErrWaitDelay taken as a failure it fails.
func TestRunProbeDoesNotWaitForAGrandchildHoldingStderr(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	m := fmt.Sprintf("30.%07d%04d", os.Getpid(), 1) // a unique sleep: the holder
	t.Cleanup(func() {
		for _, pid := range sleepsWith(m) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := runProbe(ctx, sh, "-c", "sleep "+m+" >&2 & exit 0"); err != nil {
		t.Fatalf("probe that exited 0 with its stderr still held: %v, want success", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the probe run waited out its 5 s context for the stderr holder")
	}
	if len(sleepsWith(m)) == 0 {
		t.Fatal("the stderr holder is gone already: the test did not hold the pipe past the exit")
	}
	if err := runProbe(ctx, sh, "-c", "echo no namespaces >&2; exit 1"); err == nil || err.Error() != "exit status 1: no namespaces" {
		t.Fatalf("failing probe: %v, want its exit status and stderr", err)
	}
}

//go:build unix

package subprocess

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeHarnessEnv); mode != "" {
		os.Exit(fakeHarness(mode))
	}
	if mode := os.Getenv(orphanOwnerEnv); mode != "" {
		os.Exit(orphanOwner(mode))
	}
	goleak.VerifyTestMain(m)
}

// newRuntime starts a runtime closed at the end of the test; Close must
// succeed.
func newRuntime(t testing.TB, opts Options) *Runtime {
	t.Helper()
	rt, err := New(opts, nil)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := rt.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return rt
}

var markerSeq atomic.Int64

// marker returns a unique sleep duration such as "3601.000123", so that
// /proc checks see only this test's processes.
func marker(base int) string {
	return fmt.Sprintf("%d.%06d%d", base, markerSeq.Add(1), os.Getpid()%1000)
}

// liveSleeps lists live processes whose command line is exactly "sleep m".
func liveSleeps(m string) []int {
	var out []int
	for _, p := range scanProc() {
		if p.gone() {
			continue
		}
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/cmdline"); err == nil && string(b) == "sleep\x00"+m+"\x00" {
			out = append(out, p.pid)
		}
	}
	return out
}

// liveWithCmdline lists live (non-zombie) processes whose command line
// contains substr.
func liveWithCmdline(substr string) []int {
	var out []int
	for _, p := range scanProc() {
		if p.gone() || p.pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/cmdline")
		if err != nil {
			continue
		}
		if strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), substr) {
			out = append(out, p.pid)
		}
	}
	return out
}

// assertNoSurvivor fails when a live process carries the marker within
// wait.
func assertNoSurvivor(t testing.TB, substr string, wait time.Duration) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		pids := liveWithCmdline(substr)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range pids {
				_ = syscallKill(pid)
			}
			t.Fatalf("processes matching %q survived: %v", substr, pids)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// collectSpec is the bash-tool shape: bash -c, stdin ignored, both streams
// collected.
func collectSpec(ctx context.Context, script string, maxBytes int64, grace time.Duration) Spec {
	return Spec{Context: ctx, Argv: []string{"bash", "-c", script}, Dir: os.TempDir(),
		Stdin: IgnoreStdin(), Stdout: Collect(maxBytes), Stderr: Collect(maxBytes), Grace: grace}
}

func exitCode(t testing.TB, o Outcome) int {
	t.Helper()
	if o.ExitCode == nil {
		t.Fatalf("outcome %v: want an exit code", o)
	}
	return *o.ExitCode
}

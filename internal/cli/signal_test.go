package cli_test

import (
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// interruption is a harness process to stop with a signal once it is busy:
// `harness args...` in dir with manifest, whose busy processes carry
// marker (unique to the test) on their command lines.
type interruption struct {
	dir, manifest string
	args          []string
	marker        string
	// toolCall: before looking for marked processes, wait for the first
	// tool_call event on stdout (the command runs with -o stream-json).
	toolCall bool
	// atLeast: when not 0, at least that many marked processes must be
	// running as soon as the tool call is seen (one look); when 0, wait
	// until one shows up.
	atLeast int
}

// interrupt starts the harness, waits until it is busy (see interruption),
// sends sig, and fails t unless the harness exits 130 with "harness:
// interrupted" on stderr and no marked process is left. It returns what
// the harness wrote on stdout.
func (in interruption) interrupt(t *testing.T, sig syscall.Signal) string {
	t.Helper()
	cmd := processCommand(t, in.dir, in.manifest, baseEnv(), in.args...)
	stdout := &stdoutWatch{toolCall: make(chan struct{})}
	var stderr syncBuffer
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	if in.toolCall {
		select {
		case <-stdout.toolCall:
		case <-time.After(60 * time.Second):
			t.Fatalf("no tool call; stderr: %s", stderr.String())
		}
	}
	if in.atLeast != 0 {
		if n := len(processesWith(in.marker)); n < in.atLeast {
			t.Fatalf("%d processes with the marker before the signal, want at least %d", n, in.atLeast)
		}
	} else if !sawProcess(in.marker, 60*time.Second) {
		t.Fatalf("no process with the marker started; stderr: %s", stderr.String())
	}
	start := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("harness did not exit after %v; stderr: %s", sig, stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 || !strings.Contains(stderr.String(), "harness: interrupted") {
		t.Fatalf("exit %d after %v, want 130 with harness: interrupted\nstdout: %s\nstderr: %s", code, sig, stdout.String(), stderr.String())
	}
	if left := processesWith(in.marker); len(left) != 0 {
		t.Fatalf("processes with the marker survived %v: %v", sig, left)
	}
	t.Logf("exited %v after %v", time.Since(start), sig)
	return stdout.String()
}

// stdoutWatch keeps what a harness writes on stdout and closes toolCall at
// the first stream-json tool_call event.
type stdoutWatch struct {
	syncBuffer
	once     sync.Once
	toolCall chan struct{}
}

func (w *stdoutWatch) Write(p []byte) (int, error) {
	n, err := w.syncBuffer.Write(p)
	if strings.Contains(w.String(), `"type":"tool_call"`) {
		w.once.Do(func() { close(w.toolCall) })
	}
	return n, err
}

// eachStopSignal runs test for SIGINT and for SIGTERM, each in a parallel
// subtest named after the signal. It skips in -short mode (the tests build
// the binary).
func eachStopSignal(t *testing.T, test func(t *testing.T, sig syscall.Signal)) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			test(t, sig)
		})
	}
}

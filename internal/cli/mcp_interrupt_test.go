package cli_test

import (
	"bytes"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// SIGINT or SIGTERM to a real `harness mcp list` while a server never
// answers initialize (M4): harness exits 130 with "harness: interrupted",
// prints no half table, and the server's processes (found by a marker
// unique to the test) are gone.
func TestMCPListInterruptedExits130(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			fx := mcpFixture(t)
			marker := fmt.Sprintf("mcp-list-interrupt-marker-%d-%s", time.Now().UnixNano(), sig)
			manifest := fmt.Sprintf(`plugins:
  - name: subprocess-local
  - name: tools
  - name: mcp
    config:
      grace: 300ms
      startupTimeout: 5m
      mcpServers:
        slow: {command: %s, args: [noinit, %s]}
`, fx, marker)
			cmd := processCommand(t, t.TempDir(), manifest, baseEnv(), "mcp", "list")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			// The server and the child it starts carry the marker.
			if !sawProcess(marker, 60*time.Second) {
				t.Fatalf("the server never started; stderr: %s", stderr.String())
			}
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
				t.Fatalf("exit %d, want 130 with harness: interrupted\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
			}
			if stdout.Len() != 0 {
				t.Errorf("an interrupted mcp list printed a table:\n%s", stdout.String())
			}
			if left := processesWith(marker); len(left) != 0 {
				t.Fatalf("server processes survived %v: %v", sig, left)
			}
		})
	}
}

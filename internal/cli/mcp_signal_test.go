package cli_test

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// SIGINT or SIGTERM to a real `harness run` process while MCP servers run
// (one started directly, one behind a bash launcher, as npx does) and a
// call to one of them is in flight: harness exits 130 and no server process
// survives (found in /proc by a marker unique to the test).
func TestRunSignalStopsMCPServers(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			testRunSignalStopsMCPServers(t, sig)
		})
	}
}

func testRunSignalStopsMCPServers(t *testing.T, sig syscall.Signal) {
	fx := mcpFixture(t)
	marker := fmt.Sprintf("mcp-signal-marker-%d-%s", time.Now().UnixNano(), sig)
	row := fmt.Sprintf(`  - name: mcp
    config:
      grace: 300ms
      mcpServers:
        fx: {command: %s, args: [ok, %s]}
        launched: {command: bash, args: ["-c", "%s ok %s-launched; echo done"]}
`, fx, marker, fx, marker)
	srv := llmtest.New(t, []llmtest.Turn{toolCall("c1", "mcp__fx__sleep", `{"seconds":60}`)})
	state := t.TempDir()
	cmd := processCommand(t, t.TempDir(), agentManifest(srv.URL, state, row), baseEnv(), "run", "-o", "stream-json", "-y", "sleep")
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	sawCall := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		var once sync.Once
		for sc.Scan() {
			if strings.Contains(sc.Text(), `"type":"tool_call"`) {
				once.Do(func() { close(sawCall) })
			}
		}
	}()
	select {
	case <-sawCall:
	case <-time.After(60 * time.Second):
		t.Fatalf("no tool call; stderr: %s", stderr.String())
	}
	// Both servers and the launcher are running: the launched server's
	// marker is on the bash command line and on the fixture's.
	if n := len(processesWith(marker)); n < 3 {
		t.Fatalf("%d processes with the marker before the signal, want the server, the launcher and its server", n)
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
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("exit %d after %v, want 130; stderr: %s", code, sig, stderr.String())
	}
	// harness waited for each server's range to be empty before exiting.
	if left := processesWith(marker); len(left) != 0 {
		t.Fatalf("MCP server processes survived %v: %v", sig, left)
	}
}

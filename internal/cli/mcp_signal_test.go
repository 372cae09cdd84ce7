package cli_test

import (
	"fmt"
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
	eachStopSignal(t, testRunSignalStopsMCPServers)
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
	// Both servers and the launcher are running when the call is seen: the
	// launched server's marker is on the bash command line and on the
	// fixture's. harness waits for each server's range to be empty before
	// exiting.
	interruption{
		dir:      t.TempDir(),
		manifest: agentManifest(srv.URL, t.TempDir(), row),
		args:     []string{"run", "-o", "stream-json", "-y", "sleep"},
		marker:   marker,
		toolCall: true,
		atLeast:  3, // the server, the launcher and its server
	}.interrupt(t, sig)
}

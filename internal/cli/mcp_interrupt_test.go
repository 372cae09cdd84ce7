package cli_test

import (
	"fmt"
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
	eachStopSignal(t, func(t *testing.T, sig syscall.Signal) {
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
		// The server and the child it starts carry the marker.
		in := interruption{dir: t.TempDir(), manifest: manifest, args: []string{"mcp", "list"}, marker: marker}
		if stdout := in.interrupt(t, sig); stdout != "" {
			t.Errorf("an interrupted mcp list printed a table:\n%s", stdout)
		}
	})
}

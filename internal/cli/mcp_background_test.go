package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/internal/cli"
	"github.com/dshgo/harness/internal/cli/agente2e"
)

// runBounded is runAgent with a context that ends after limit: a command
// that waits for something it should not comes back interrupted instead of
// hanging the test.
func runBounded(t *testing.T, dir, manifest string, limit time.Duration, args ...string) runOut {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "harness.yml")
	if err := os.WriteFile(cfg, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	mods := agente2e.Needed()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var out, errb bytes.Buffer
	env := &cli.Env{
		Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""),
		Plugins:   mods,
		LookupEnv: func(string) (string, bool) { return "", false },
		Getwd:     func() (string, error) { return dir, nil },
		Ctx:       ctx,
	}
	code := cli.Run(append([]string{"--config", cfg}, args...), env)
	if ctx.Err() != nil {
		t.Fatalf("%v did not finish within %s (it waited for an MCP server it does not use?)\nstdout: %s\nstderr: %s", args, limit, out.String(), errb.String())
	}
	return runOut{out.String(), errb.String(), code}
}

// Servers connect in the background (issue 35): a server that never
// answers initialize (startupTimeout 1h) delays neither `harness tool
// bash` nor `harness tools` (which marks it pending), and `harness tool`
// of another server's tool waits for that server only.
func TestMCPServersConnectInTheBackground(t *testing.T) {
	t.Parallel()
	fx := mcpFixture(t)
	manifest := fmt.Sprintf(`plugins:
  - name: subprocess-local
  - name: tools
  - name: tool-bash
  - name: mcp
    config:
      grace: 300ms
      servers:
        dead: {command: %s, args: [noinit], startupTimeout: 1h}
        slow: {command: %s, args: [slowstart, "300"]}
`, fx, fx)
	dir := t.TempDir()
	r := runBounded(t, dir, manifest, 60*time.Second, "tool", "bash", `{"command":"echo not delayed"}`)
	if r.code != 0 || r.stdout != "not delayed\n" {
		t.Fatalf("tool bash: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = runBounded(t, dir, manifest, 60*time.Second, "tools")
	if r.code != 0 || !strings.Contains(r.stdout, "mcp__dead__*") || !strings.Contains(r.stdout, "pending: the MCP server is still connecting") {
		t.Fatalf("tools: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = runBounded(t, dir, manifest, 60*time.Second, "tool", "mcp__slow__echo", `{"text":"waited for slow only"}`)
	if r.code != 0 || r.stdout != "echo: waited for slow only\n" {
		t.Fatalf("tool mcp__slow__echo: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A project's .mcp.json is read after a person trusts it (issue 35):
// untrusted, `harness check` says so (a warning, exit 0) and `harness mcp
// list` shows no server; `harness mcp trust` prints what it trusts; then
// the server runs.
func TestCheckSaysAnUntrustedMCPJSONAndTrustStartsIt(t *testing.T) {
	t.Parallel()
	fx := mcpFixture(t)
	dir, state := t.TempDir(), t.TempDir()
	file := filepath.Join(dir, ".mcp.json")
	if err := os.WriteFile(file, []byte(fmt.Sprintf(`{"mcpServers": {"proj": {"command": %q, "args": ["ok"]}}}`, fx)), 0o600); err != nil {
		t.Fatal(err)
	}
	manifest := fmt.Sprintf("plugins:\n  - name: subprocess-local\n  - name: tools\n  - name: mcp\n    config: {cwd: %s, stateDir: %s, grace: 300ms}\n", dir, state)
	r := runAgent(t, dir, manifest, "", "check")
	if r.code != 0 || !strings.Contains(r.stderr, "harness: warning: mcp: "+file+" (servers: proj) is not trusted, so its servers do not start") {
		t.Fatalf("check: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = runAgent(t, dir, manifest, "", "mcp", "list")
	if r.code != 0 || strings.Contains(r.stdout, "proj ") || !strings.Contains(r.stdout, "is not trusted") {
		t.Fatalf("mcp list: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = runAgent(t, dir, manifest, "", "mcp", "trust", "--state-dir", state)
	if r.code != 0 || r.stdout != "trusted "+file+"\n  proj: "+fx+" ok\n" {
		t.Fatalf("mcp trust: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = runAgent(t, dir, manifest, "", "mcp", "list")
	if r.code != 0 || !strings.Contains(r.stdout, "proj  stdio      ready") || strings.Contains(r.stdout, "not trusted") {
		t.Fatalf("mcp list after trust: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	r = runAgent(t, dir, manifest, "", "check")
	if r.code != 0 || strings.Contains(r.stderr, "not trusted") {
		t.Fatalf("check after trust: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

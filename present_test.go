package harness_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/dshgo/harness"
	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/plugins/mcp"
	"github.com/dshgo/harness/services/tools"
)

// Every tool of the default manifest, and the tools an MCP server adds,
// presents its own calls: a front end draws each one from its
// presentation and never falls back to the call's raw arguments.
func TestDefaultToolsPresentTheirCalls(t *testing.T) {
	// The server runs in the default sandbox, which shows it only the
	// working directory (not the rest of /tmp): build it there.
	work := t.TempDir()
	fixture := filepath.Join(work, "fixture")
	build := exec.Command("go", "build", "-o", fixture, "./plugins/mcp/testdata/fixture")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the MCP fixture server: %v\n%s", err, out)
	}
	servers := []byte("servers: {}")
	if !bytes.Contains(harness.DefaultManifest, servers) {
		t.Fatal("the default manifest's mcp row has no `servers: {}` to replace")
	}
	manifest := bytes.Replace(harness.DefaultManifest, servers,
		[]byte("servers: {fx: {command: "+fixture+", args: [ok, present-test]}}"), 1)
	t.Chdir(work)
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	if err := os.WriteFile("go.mod", []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := harnesstest.Start(t, string(manifest))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m := harnesstest.Service(t, h, mcp.Key)
	if err := m.Wait(ctx); err != nil {
		t.Fatalf("waiting for the MCP server: %v", err)
	}
	var names []string
	for _, tool := range harnesstest.Service(t, h, tools.Key).Tools(nil) {
		names = append(names, tool.Name())
		if !tool.Presents() {
			t.Errorf("tool %s has no presentation (tools.WithPresent): front ends would show its raw arguments", tool.Name())
		}
	}
	for _, want := range []string{"bash", "bash_output", "edit", "glob", "grep", "kill_shell", "list_agents", "mcp__fx__echo",
		"read", "send_message", "task", "todo_write", "write", "write_stdin"} {
		if !slices.Contains(names, want) {
			t.Errorf("the default tool set lacks %s (has %v)", want, names)
		}
	}
}

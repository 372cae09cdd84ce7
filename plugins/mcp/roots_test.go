//go:build unix

package mcp_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/plugins/mcp"
	"github.com/dshgo/harness/services/tools"
)

// The client advertises the workspace (and the row's roots) as MCP roots,
// and SetRoots sends roots/list_changed (issue 35): the official
// filesystem server, started without directories, serves exactly the
// roots, and after SetRoots the new directory too.
func TestRootsAreTheWorkspaceAndFollowChanges(t *testing.T) {
	t.Parallel()
	bin := npmBin(t, "mcp-server-filesystem")
	ws, extra := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(extra, "later.txt"), []byte("seen after list_changed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, m, reg := boot(t, fmt.Sprintf("cwd: %s\nservers:\n  fs:\n    command: %s\n", ws, bin))
	if st := status(t, m, "fs"); st.State != mcp.StateReady {
		t.Fatalf("fs: %+v", st)
	}
	if r := m.Roots(); len(r) != 1 || r[0] != ws {
		t.Fatalf("roots = %v, want [%s]", r, ws)
	}
	allowed := func() string {
		o := call(reg, "mcp__fs__list_allowed_directories", `{}`)
		return tools.TextOf(o.Content)
	}
	eventually(t, "the server to take the workspace root", func() bool { return strings.Contains(allowed(), ws) })
	if strings.Contains(allowed(), extra) {
		t.Fatalf("extra allowed before SetRoots: %s", allowed())
	}
	m.SetRoots([]string{ws, extra})
	eventually(t, "the server to take the new root", func() bool { return strings.Contains(allowed(), extra) })
	o := call(reg, "mcp__fs__read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(extra, "later.txt")))
	if o.IsError || !strings.Contains(tools.TextOf(o.Content), "seen after list_changed") {
		t.Fatalf("read in the new root: %s", tools.TextOf(o.Content))
	}
}

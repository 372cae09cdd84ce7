//go:build unix

package mcp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/plugins/mcp"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tools"
)

// Servers connect in the background: the row applies at once, a server
// that never answers is pending (and the model's runtime context says
// so) while another one's tools are already usable, and WaitForTool waits
// only for the server that owns the tool.
func TestServersConnectInTheBackground(t *testing.T) {
	t.Parallel()
	manifest := "plugins:\n  - name: subprocess-local\n  - name: tools\n  - name: systemprompt\n  - name: mcp\n    config:\n      grace: 200ms\n      servers:\n" +
		indent(fixtureServer("dead", "noinit", marker(), "startupTimeout: 1h"), "        ") +
		indent(fixtureServer("fx", "ok", marker()), "        ")
	h := harnesstest.Start(t, manifest)
	m := harnesstest.Service(t, h, mcp.Key)
	reg := harnesstest.Service(t, h, tools.Key)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.WaitForTool(ctx, "mcp__fx__echo"); err != nil {
		t.Fatalf("waiting for fx: %v", err)
	}
	if err := m.WaitForTool(ctx, "bash"); err != nil {
		t.Fatalf("a built-in tool waits: %v", err)
	}
	if o := call(reg, "mcp__fx__echo", `{"text":"while dead is pending"}`); o.IsError {
		t.Fatalf("echo: %s", tools.TextOf(o.Content))
	}
	if p := m.Pending(); len(p) != 1 || p[0] != "dead" {
		t.Fatalf("pending = %v, want [dead]", p)
	}
	if st := status(t, m, "dead"); st.State != mcp.StateStarting {
		t.Fatalf("dead: %+v", st)
	}
	sp := harnesstest.Service(t, h, systemprompt.Key)
	a, err := sp.Assemble(ctx, systemprompt.AssembleContext{})
	if err != nil {
		t.Fatal(err)
	}
	var text string
	for _, c := range a.Contexts {
		if c.Name == "mcp-pending" {
			text = c.Text
		}
	}
	if !strings.Contains(text, "MCP servers still connecting: dead.") {
		t.Fatalf("runtime context lacks the pending server: %q (%+v)", text, a.Contexts)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer wcancel()
	if err := m.WaitForTool(wctx, "mcp__dead__echo"); err == nil {
		t.Fatal("WaitForTool of the dead server returned before it settled")
	}
}

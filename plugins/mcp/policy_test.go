//go:build unix

package mcp_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/services/tools"
)

// Permission rules and modes apply to MCP tools: plan mode runs a tool
// with readOnlyHint and refuses one without; a deny rule on an MCP tool
// holds; a PreToolUse hook with matcher mcp__.* sees the call.
func TestPolicyAppliesToMCPTools(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	hookLog := dir + "/hook.log"
	_, _, reg := boot(t, "servers:\n"+indent(fixtureServer("fx", "ok", marker()), "  "),
		"  - name: approval\n    config: {answerer: headless}\n",
		"  - name: permission\n    config:\n      mode: plan\n      deny: [\"mcp__fx__fail\"]\n",
		"  - name: hooks\n    config:\n      hooks:\n        PreToolUse:\n          - matcher: \"mcp__.*\"\n            hooks:\n              - {type: command, command: \"cat >> "+hookLog+"; echo >> "+hookLog+"\"}\n")
	if o := call(reg, "mcp__fx__echo", `{"text":"read-only"}`); o.IsError {
		t.Fatalf("plan mode refused a read-only MCP tool: %s", tools.TextOf(o.Content))
	}
	if o := call(reg, "mcp__fx__sleep", `{"seconds":0}`); !o.IsError || !strings.Contains(tools.TextOf(o.Content), "plan mode allows only read-only tools") {
		t.Fatalf("plan mode ran a tool without readOnlyHint: %s", tools.TextOf(o.Content))
	}
	if o := call(reg, "mcp__fx__fail", `{}`); !o.IsError || !strings.Contains(tools.TextOf(o.Content), `rule "mcp__fx__fail" in the deny list`) {
		t.Fatalf("deny rule: %s", tools.TextOf(o.Content))
	}
	b, err := os.ReadFile(hookLog)
	if err != nil || !strings.Contains(string(b), `"tool_name":"mcp__fx__echo"`) {
		t.Fatalf("the PreToolUse hook did not see the MCP call (%v); log:\n%s", err, b)
	}
}

// A call cancelled by its caller (a user interrupt) returns at once and the
// server is sent notifications/cancelled.
func TestInterruptCancelsTheRequest(t *testing.T) {
	t.Parallel()
	_, m, reg := boot(t, "servers:\n"+indent(fixtureServer("slow", "ok", marker()), "  "))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(300*time.Millisecond, cancel)
	o := reg.Execute(ctx, tools.Call{ID: "i", Name: "mcp__slow__sleep", Arguments: `{"seconds":30}`})
	if !o.IsError || o.Error == nil || o.Error.Code != tools.CodeAborted {
		t.Fatalf("interrupted call: %s %+v", tools.TextOf(o.Content), o.Error)
	}
	eventually(t, "the server to see notifications/cancelled", func() bool {
		return strings.Contains(status(t, m, "slow").Stderr, "fixture: sleep cancelled")
	})
}

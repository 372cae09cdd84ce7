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

// MCP stdio servers run under the deployment's containment policy, the one
// bash calls run under (issue 32): with the subprocess row sandboxing
// commands, the official filesystem server cannot read a denyRead file nor
// write outside its workspace, though both are in its allowed directories.
// An entry of its own keeps the deployment's denyRead; `sandbox: {mode:
// off}` opts out, and says so.
func TestServersRunUnderTheDeploymentSandbox(t *testing.T) {
	t.Parallel()
	bin := npmBin(t, "mcp-server-filesystem")
	ws := t.TempDir()
	secret := filepath.Join(ws, ".env")
	if err := os.WriteFile(secret, []byte("API_KEY=sandbox-must-hide-this\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Outside the workspace but visible in the sandbox (its /tmp is
	// private): a directory of this package.
	pkg, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	outside, err := os.MkdirTemp(filepath.Join(pkg, "testdata"), "outside-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(outside) })
	entry := func(name, extra string) string {
		return fmt.Sprintf("        %s:\n          command: %s\n          args: [%s, %s]\n%s", name, bin, ws, outside, extra)
	}
	manifest := "plugins:\n  - name: subprocess-local\n    config:\n      sandbox: {mode: workspace-write, denyRead: [\"**/.env\"]}\n" +
		"  - name: tools\n  - name: mcp\n    config:\n      cwd: " + ws + "\n      roots: [" + outside + "]\n      servers:\n" +
		entry("boxed", "") +
		entry("own", "          sandbox: {mode: workspace-write}\n") +
		entry("loose", "          sandbox: {mode: off}\n")
	_, m, reg := startAndWait(t, manifest)
	for _, name := range []string{"boxed", "own"} {
		st := status(t, m, name)
		if st.State != mcp.StateReady || st.Sandbox == nil || st.Sandbox.Enforcement == "none" || st.Unsandboxed != "" {
			t.Fatalf("%s: %+v (sandbox %+v)", name, st, st.Sandbox)
		}
		o := call(reg, "mcp__"+name+"__read_text_file", fmt.Sprintf(`{"path":%q}`, secret))
		if strings.Contains(tools.TextOf(o.Content), "sandbox-must-hide-this") {
			t.Fatalf("%s read a denyRead file: %s", name, tools.TextOf(o.Content))
		}
		target := filepath.Join(outside, name+".txt")
		if o := call(reg, "mcp__"+name+"__write_file", fmt.Sprintf(`{"path":%q,"content":"x"}`, target)); !o.IsError {
			t.Fatalf("%s wrote outside its workspace: %s", name, tools.TextOf(o.Content))
		}
		if _, err := os.Stat(target); err == nil {
			t.Fatalf("%s: the file outside the workspace exists", name)
		}
		inside := filepath.Join(ws, name+".txt")
		if o := call(reg, "mcp__"+name+"__write_file", fmt.Sprintf(`{"path":%q,"content":"x"}`, inside)); o.IsError {
			t.Fatalf("%s cannot write its workspace: %s", name, tools.TextOf(o.Content))
		}
	}
	st := status(t, m, "loose")
	if st.State != mcp.StateReady || st.Sandbox != nil || !strings.Contains(st.Unsandboxed, "sandbox mode off") {
		t.Fatalf("loose: %+v", st)
	}
	if o := call(reg, "mcp__loose__read_text_file", fmt.Sprintf(`{"path":%q}`, secret)); !strings.Contains(tools.TextOf(o.Content), "sandbox-must-hide-this") {
		t.Fatalf("the opted-out server cannot read the file: %s", tools.TextOf(o.Content))
	}
}

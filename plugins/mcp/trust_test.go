//go:build unix

package mcp_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/plugins/mcp"
)

// A project's .mcp.json names programs to run: read by default, its
// servers start only once a person trusted the file with its current
// content (issue 35). Untrusted, nothing of it runs and the row says so;
// trusted, its servers start; changed after trusting, it is untrusted
// again; revoked, untrusted.
func TestProjectFileServersNeedTrust(t *testing.T) {
	t.Parallel()
	dir, state := t.TempDir(), t.TempDir()
	mark := marker()
	write := func(arg string) {
		t.Helper()
		json := fmt.Sprintf(`{"mcpServers": {"proj": {"command": %q, "args": ["ok", %q]}}}`, fixture, arg)
		if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(json), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(mark)
	cfg := "cwd: " + dir + "\nstateDir: " + state + "\n" // projectFile: true is the default
	untrusted := func(when string) {
		t.Helper()
		_, m, _ := boot(t, cfg)
		if n := len(m.Servers()); n != 0 {
			t.Fatalf("%s: %d servers started from an untrusted .mcp.json: %+v", when, n, m.Servers())
		}
		if s := survivors(mark); len(s) != 0 {
			t.Fatalf("%s: the untrusted server runs: %v", when, s)
		}
		path := filepath.Join(dir, ".mcp.json")
		if m.UntrustedProjectFile() != path {
			t.Fatalf("%s: UntrustedProjectFile = %q", when, m.UntrustedProjectFile())
		}
		n := m.Notices()
		if len(n) != 1 || !strings.Contains(n[0], path+" (servers: proj) is not trusted") || !strings.Contains(n[0], "harness mcp trust") {
			t.Fatalf("%s: notices %q", when, n)
		}
	}
	untrusted("before trusting")

	path, servers, err := mcp.TrustProjectFile(state, dir, false)
	if err != nil || path != filepath.Join(dir, ".mcp.json") || servers["proj"].Command != fixture {
		t.Fatalf("trust: %q %+v %v", path, servers, err)
	}
	h, m, reg := boot(t, cfg)
	if st := status(t, m, "proj"); st.State != mcp.StateReady || m.UntrustedProjectFile() != "" || len(m.Notices()) != 0 {
		t.Fatalf("trusted: %+v notices %q", st, m.Notices())
	}
	if o := call(reg, "mcp__proj__echo", `{"text":"trusted"}`); o.IsError {
		t.Fatalf("echo: %+v", o)
	}
	if err := h.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}

	write(mark + "-changed") // a commit that changes the trusted file
	untrusted("after a change")

	write(mark)
	if _, _, err := mcp.TrustProjectFile(state, dir, true); err != nil {
		t.Fatal(err)
	}
	untrusted("after revoking")

	// projectFile: false ignores the file altogether.
	_, m, _ = boot(t, cfg+"projectFile: false\n")
	if len(m.Servers()) != 0 || len(m.Notices()) != 0 || m.UntrustedProjectFile() != "" {
		t.Fatalf("projectFile false: %+v %q", m.Servers(), m.Notices())
	}
}

// A server defined in several places runs once (issue 35): pasted under
// both keys of the row it is one server; a trusted .mcp.json entry with a
// name or a definition the row has is skipped with a notice naming the
// entry kept; a distinct one runs.
func TestServersDefinedInSeveralPlacesRunOnce(t *testing.T) {
	t.Parallel()
	dir, state := t.TempDir(), t.TempDir()
	mark, other := marker(), marker()
	json := fmt.Sprintf(`{"mcpServers": {
  "fx": {"command": %[1]q, "args": ["ok", "project-fx"]},
  "alias": {"command": %[1]q, "args": ["ok", %[2]q]},
  "other": {"command": %[1]q, "args": ["ok", %[3]q]}}}`, fixture, mark, other)
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(json), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := mcp.TrustProjectFile(state, dir, false); err != nil {
		t.Fatal(err)
	}
	entry := fmt.Sprintf("  fx:\n    command: %s\n    args: [ok, %s]\n", fixture, mark)
	_, m, _ := boot(t, "cwd: "+dir+"\nstateDir: "+state+"\nservers:\n"+entry+"mcpServers:\n"+entry)
	var names []string
	for _, s := range m.Servers() {
		names = append(names, s.Name+"="+string(s.State))
	}
	if strings.Join(names, " ") != "fx=ready other=ready" {
		t.Fatalf("servers: %v", names)
	}
	if st := status(t, m, "fx"); st.Source != "servers" {
		t.Fatalf("fx comes from %q, want the row's servers", st.Source)
	}
	if s := survivors(mark); len(s) != 1 {
		t.Fatalf("the server defined three times runs %d times", len(s))
	}
	if strings.Contains(fmt.Sprint(m.Servers()), "project-fx") || len(survivors("project-fx")) != 0 {
		t.Fatal("the project file's fx started")
	}
	n := strings.Join(m.Notices(), "\n")
	file := filepath.Join(dir, ".mcp.json")
	if !strings.Contains(n, file+": mcpServers.alias: skipped: the same server as servers.fx") ||
		!strings.Contains(n, file+": mcpServers.fx: skipped: servers.fx defines a server of that name") {
		t.Fatalf("notices:\n%s", n)
	}
}

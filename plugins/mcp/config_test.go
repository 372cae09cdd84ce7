//go:build unix

package mcp_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/plugins/mcp"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/tools"
	"gopkg.in/yaml.v3"
)

// decode decodes YAML text into cfg and returns cfg.
func decode(t *testing.T, text string, cfg *mcp.Config) *mcp.Config {
	t.Helper()
	if err := yaml.Unmarshal([]byte(text), cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestToolNames(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ server, tool, want string }{
		{"github", "create_issue", "mcp__github__create_issue"},
		{"my.docs", "search docs", "mcp__my_docs__search_docs"},
		{"everything", "get-sum", "mcp__everything__get-sum"},
		{"s", strings.Repeat("a", 80), "mcp__s__" + strings.Repeat("a", 47) + "_"},
	} {
		got := mcp.ToolName(tt.server, tt.tool)
		if len(got) > 64 || !strings.HasPrefix(got, tt.want) || (len(tt.tool) < 60 && got != tt.want) {
			t.Errorf("ToolName(%q, %q) = %q, want %q", tt.server, tt.tool, got, tt.want)
		}
	}
	if mcp.ToolName("s", strings.Repeat("a", 80)) == mcp.ToolName("s", strings.Repeat("a", 81)) {
		t.Error("distinct long names collide")
	}
}

func TestConfigErrorsNameTheServerAndField(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		yaml, want string
	}{
		{"servers: {a: {args: [x]}}", "servers.a.command: a stdio server needs a command"},
		{"servers: {a: {type: http}}", "servers.a.url: an http server needs a url"},
		{"servers: {a: {url: ftp://x}}", `servers.a.url: want an http:// or https:// URL, got "ftp://x"`},
		{"servers: {a: {command: x, url: http://x}}", "servers.a: url and headers belong to http and sse servers"},
		{"servers: {a: {command: x, restart: always}}", `servers.a.restart: want never or on-failure, got "always"`},
		{"servers: {a: {command: x, type: websocket}}", `servers.a.type: want stdio, http or sse, got "websocket"`},
		{"servers: {a: {url: http://x, sandbox: {mode: read-only}}}", "servers.a: command, args, env, cwd and sandbox belong to stdio servers"},
		{"servers: {a: {command: x, sandbox: {mode: jail}}}", "servers.a.sandbox: "},
		{"servers: {a.b: {command: x}}\nmcpServers: {a_b: {command: y}}", "mcpServers.a_b: server name clashes with servers.a.b"},
	} {
		cfg := mcp.Config{}
		cfg.SetDefaults()
		err := core.ValidateConfig("mcp", decode(t, tt.yaml, &cfg))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.yaml, err, tt.want)
		}
	}
}

func TestProjectFileIsReadWithClaudeCodeExpansion(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("MCP_TEST_DIR", dir)
	mark := marker()
	json := `{"mcpServers": {"proj": {"command": "` + fixture + `", "args": ["ok", "${MCP_TEST_UNSET:-` + mark + `}"], "env": {"WHERE": "${MCP_TEST_DIR}"}}}}`
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(json), 0o600); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	if _, _, err := mcp.TrustProjectFile(state, dir, false); err != nil {
		t.Fatal(err)
	}
	_, m, reg := boot(t, "projectFile: true\ncwd: "+dir+"\nstateDir: "+state+"\n")
	st := status(t, m, "proj")
	if st.State != mcp.StateReady || st.Source != filepath.Join(dir, ".mcp.json")+": mcpServers" {
		t.Fatalf("status %+v", st)
	}
	if len(survivors(mark)) != 1 {
		t.Fatal("the default of ${MCP_TEST_UNSET:-…} did not reach the server's argv")
	}
	if o := call(reg, "mcp__proj__echo", `{"text":"p"}`); o.IsError {
		t.Fatalf("echo: %+v", o)
	}
}

func TestMalformedProjectFileFailsTheRowWithItsPlace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte("{\"mcpServers\": {\n  \"a\": {\"command\": 5}}}"), 0o600); err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	if _, _, err := mcp.TrustProjectFile(state, dir, false); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, ".mcp.json")+":2:20: json: cannot unmarshal number") {
		t.Fatalf("trusting a malformed file: %v", err)
	}
	// Trusted before it broke: the row fails naming the place.
	good := []byte(`{"mcpServers": {}}`)
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), good, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := mcp.TrustProjectFile(state, dir, false); err != nil {
		t.Fatal(err)
	}
	rec, err := os.ReadFile(filepath.Join(state, mcp.TrustFileName))
	if err != nil {
		t.Fatal(err)
	}
	bad := []byte("{\"mcpServers\": {\n  \"a\": {\"command\": 5}}}")
	// Same trust record, the digest of the bad content: as if the person
	// had trusted the file as it is now.
	sumGood, sumBad := sha(good), sha(bad)
	if err := os.WriteFile(filepath.Join(state, mcp.TrustFileName), []byte(strings.Replace(string(rec), sumGood, sumBad, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), bad, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := mcp.Config{}
	cfg.SetDefaults()
	cfg.ProjectFile, cfg.Cwd, cfg.StateDir = true, dir, state
	root := core.NewRoot()
	defer root.Dispose(context.Background())
	root.Context().Plugin(subprocess.Plugin, nil)
	root.Context().Plugin(tools.Plugin, nil)
	f := root.Context().Plugin(mcp.Plugin, &cfg)
	_ = f.Await(t.Context())
	if err := f.Err(); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, ".mcp.json")+":2:20: json: cannot unmarshal number") {
		t.Fatalf("err = %v", err)
	}
}

func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

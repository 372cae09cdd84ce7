package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/dshgo/harness/services/llm/llmtest"
)

var (
	fixtureOnce sync.Once
	fixturePath string
	fixtureErr  error
)

// mcpFixture builds the Go fixture MCP server of plugins/mcp once per test
// binary and returns its path.
func mcpFixture(t *testing.T) string {
	t.Helper()
	fixtureOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cli-mcp-fixture-")
		if err != nil {
			fixtureErr = err
			return
		}
		builtDirs.add(dir)
		fixturePath = filepath.Join(dir, "fixture")
		build := exec.Command("go", "build", "-o", fixturePath, "../../plugins/mcp/testdata/fixture")
		build.Dir = testDir
		out, err := build.CombinedOutput()
		if err != nil {
			fixtureErr = fmt.Errorf("go build fixture: %v\n%s", err, out)
		}
	})
	if fixtureErr != nil {
		t.Fatal(fixtureErr)
	}
	return fixturePath
}

func mcpRow(fixture string, extra string) string {
	return fmt.Sprintf(`  - name: mcp
    config:
      grace: 300ms
      mcpServers:
        fx: {command: %s, args: [ok]}
%s`, fixture, extra)
}

// An agent run: the scripted model calls an MCP tool and gets its result;
// the server's instructions are in the system prompt; a PreToolUse-style
// rule on mcp__* applies.
func TestRunCallsAnMCPTool(t *testing.T) {
	t.Parallel()
	fx := mcpFixture(t)
	srv := llmtest.New(t, []llmtest.Turn{
		toolCall("c1", "mcp__fx__echo", `{"text":"from the model"}`),
		text("The server said it."),
	})
	dir := t.TempDir()
	r := runAgent(t, dir, agentManifest(srv.URL, t.TempDir(), mcpRow(fx, "")), "", "run", "use the echo tool")
	if r.code != 0 || r.stdout != "The server said it.\n" {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	first, _ := reqs[0].Wire()
	offered := false
	for _, tl := range first.Tools {
		offered = offered || tl.Function.Name == "mcp__fx__echo"
	}
	if !offered {
		t.Fatal("mcp__fx__echo not offered to the model")
	}
	if sys := first.Messages[0].Text(); !strings.Contains(sys, "## fx\n\nFixture instructions: call echo to repeat text.") {
		t.Fatalf("system prompt lacks the server instructions:\n%s", sys)
	}
	last, _ := reqs[1].Wire()
	var result string
	for _, m := range last.Messages {
		if m.Role == "tool" && m.ToolCallID == "c1" {
			result = m.Text()
		}
	}
	if result != "echo: from the model" {
		t.Fatalf("tool result = %q", result)
	}
}

func TestMCPCommands(t *testing.T) {
	t.Parallel()
	fx := mcpFixture(t)
	manifest := "plugins:\n  - name: subprocess-local\n  - name: tools\n" + mcpRow(fx, "")
	dir := t.TempDir()
	r := runAgent(t, dir, manifest, "", "mcp", "list")
	if r.code != 0 || !strings.Contains(r.stdout, "fx    stdio      ready  5      2025-11-25  fixture 1.0.0") {
		t.Fatalf("mcp list: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runAgent(t, dir, manifest, "", "mcp", "list", "--json")
	var list []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 1 || list[0]["state"] != "ready" {
		t.Fatalf("mcp list --json: %v %s", err, r.stdout)
	}
	r = runAgent(t, dir, manifest, "", "mcp", "tools", "fx")
	if r.code != 0 || !strings.Contains(r.stdout, "mcp__fx__echo    yes        Echo the text back.") {
		t.Fatalf("mcp tools: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runAgent(t, dir, manifest, "", "mcp", "tools", "nope")
	if r.code != 2 || !strings.Contains(r.stderr, `no MCP server named "nope" (configured: fx)`) {
		t.Fatalf("mcp tools nope: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runAgent(t, dir, manifest, "", "mcp", "call", "fx", "echo", `{"text":"cli"}`)
	if r.code != 0 || r.stdout != "echo: cli\n" {
		t.Fatalf("mcp call: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runAgent(t, dir, manifest, "", "mcp", "call", "fx", "fail")
	if r.code != 1 || r.stdout != "Error: the fixture failed on purpose\n" {
		t.Fatalf("mcp call fail: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// `harness tools` does not wait for the servers: fx is listed, or
	// marked pending when it has not connected yet.
	r = runAgent(t, dir, manifest, "", "tools")
	if r.code != 0 || !(strings.Contains(r.stdout, "mcp__fx__sleep") || strings.Contains(r.stdout, "mcp__fx__*  (pending")) {
		t.Fatalf("tools: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runAgent(t, dir, manifest, "", "check")
	if r.code != 0 {
		t.Fatalf("check: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestCheckAndPluginsReportAFailedServer(t *testing.T) {
	t.Parallel()
	fx := mcpFixture(t)
	manifest := "plugins:\n  - name: subprocess-local\n  - name: tools\n" +
		mcpRow(fx, fmt.Sprintf("        broken: {command: %s, args: [crash]}\n", fx))
	dir := t.TempDir()
	r := runAgent(t, dir, manifest, "", "check")
	// The transport error is whichever the dead server left first (EOF on
	// its stdout, or EPIPE on its stdin; the SDK says "connection closed: "
	// first when its reader saw the end before the call was sent): the
	// report must name the server, the call, the exit status and the
	// stderr tail.
	failed := regexp.MustCompile(`mcp server "broken": failed: mcp server "broken": (connection closed: )?calling "initialize": [^\n]+ \(server process exit 7\); stderr tail:`)
	if r.code != 2 || !failed.MatchString(r.stderr) ||
		!strings.Contains(r.stderr, "fixture: cannot open database: permission denied") {
		t.Fatalf("check: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runAgent(t, dir, manifest, "", "plugins")
	if r.code != 0 || !strings.Contains(r.stdout, `mcp server "broken": failed`) || !strings.Contains(r.stdout, "permission denied") {
		t.Fatalf("plugins: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = runAgent(t, dir, manifest, "", "plugins", "--json")
	var rows []struct {
		Name     string `json:"name"`
		State    string `json:"state"`
		Problems []struct {
			Server, State, Error string
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rows); r.code != 0 || err != nil {
		t.Fatalf("plugins --json: %d %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	var problems int
	for _, row := range rows {
		for _, p := range row.Problems {
			problems++
			if row.Name != "mcp" || p.Server != "broken" || p.State != "failed" || !strings.Contains(p.Error, "permission denied") || !strings.Contains(p.Error, "exit 7") {
				t.Errorf("plugins --json: row %s problem %+v", row.Name, p)
			}
		}
	}
	if problems != 1 {
		t.Fatalf("plugins --json: %d problems, want the broken server's\n%s", problems, r.stdout)
	}
	// The working server is usable all the same.
	r = runAgent(t, dir, manifest, "", "tool", "mcp__fx__echo", `{"text":"ok"}`)
	if r.code != 0 || r.stdout != "echo: ok\n" {
		t.Fatalf("tool: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

func TestConfigRedactsMCPHeaders(t *testing.T) {
	t.Parallel()
	manifest := `plugins:
  - name: mcp
    config:
      mcpServers:
        docs: {type: http, url: "https://example.com/mcp", headers: {Authorization: "Bearer sk-literal"}}
        gh: {command: gh-mcp, env: {GITHUB_TOKEN: "ghp_literal", PLAIN: visible}}
`
	r := runAgent(t, t.TempDir(), manifest, "", "config")
	if r.code != 0 || strings.Contains(r.stdout, "sk-literal") || strings.Contains(r.stdout, "ghp_literal") || !strings.Contains(r.stdout, "visible") {
		t.Fatalf("config: %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

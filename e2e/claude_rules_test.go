package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClaudeSettingsRulesHaveClaudeMeaning: a project's
// .claude/settings.json, loaded as it is by the real binary on the default
// manifest (headless, no -y), has its permission rules read as Claude Code
// documents them (docs/policy.md, "Claude Code rules"): an Edit deny also
// refuses write, `/config/**` is relative to the project root, `//…` is
// absolute, `mcp__fs` covers every tool of the server, and a WebFetch domain
// rule governs web_fetch.
func TestClaudeSettingsRulesHaveClaudeMeaning(t *testing.T) {
	needTools(t, "bwrap", "node")
	mcpServer, err := filepath.Abs("../plugins/mcp/testdata/npm/node_modules/.bin/mcp-server-filesystem")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mcpServer); err != nil {
		missing(t, "the MCP filesystem server is not installed: npm ci --prefix plugins/mcp/testdata/npm")
	}
	p := newProject(t, map[string]string{"main.go": "package main\n", "docs/readme.md": "docs\n"})
	outside := filepath.Join(filepath.Dir(p.dir), "outside")
	writeFile(t, filepath.Join(outside, "secret.txt"), "outside secret\n")
	settings := fmt.Sprintf(`{
  "permissions": {
    "allow": ["Edit(/docs/**)"],
    "deny": [
      "Edit(./tsconfig.json)",
      "Edit(/config/**)",
      "Read(/%s/**)",
      "mcp__fs",
      "WebFetch(domain:example.com)"
    ]
  }
}
`, outside)
	writeFile(t, filepath.Join(p.dir, ".claude", "settings.json"), settings)
	writeFile(t, filepath.Join(p.home, ".config", "harness", "harness.yml"),
		fmt.Sprintf("- id: mcp\n  config: {servers: {fs: {command: %s, args: [%s]}}}\n- id: permission\n  config: {mode: default}\n", mcpServer, p.dir))

	out := p.tool(t, "write", map[string]any{"file_path": "tsconfig.json", "content": "{}\n"})
	if !strings.Contains(out, `permission denied: rule "Edit(./tsconfig.json)"`) {
		t.Errorf("write tsconfig.json under an Edit deny:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(p.dir, "tsconfig.json")); err == nil {
		t.Error("write created tsconfig.json under Edit(./tsconfig.json) in deny")
	}
	out = p.tool(t, "edit", map[string]any{"file_path": "config/app.yml", "old_string": "", "new_string": "x"})
	if !strings.Contains(out, "permission denied: rule") || !strings.Contains(out, "/config/**") {
		t.Errorf("edit config/app.yml under Edit(/config/**) (project-root relative):\n%s", out)
	}
	out = p.tool(t, "write", map[string]any{"file_path": "config/app.yml", "content": "x: 1\n"})
	if !strings.Contains(out, "permission denied: rule") {
		t.Errorf("write config/app.yml under Edit(/config/**):\n%s", out)
	}
	// The allow rule Edit(/docs/**) covers write in the default mode (no
	// one to ask headless: without it the write would be refused).
	out = p.tool(t, "write", map[string]any{"file_path": "docs/new.md", "content": "new\n"})
	if b, err := os.ReadFile(filepath.Join(p.dir, "docs", "new.md")); err != nil || string(b) != "new\n" {
		t.Errorf("write docs/new.md under Edit(/docs/**) in allow: %v\n%s", err, out)
	}
	out = p.tool(t, "write", map[string]any{"file_path": "notes.md", "content": "x\n"})
	if !strings.Contains(out, "requires approval") {
		t.Errorf("write notes.md (no rule, default mode, headless) was not refused as asked:\n%s", out)
	}
	out = p.tool(t, "read", map[string]any{"file_path": filepath.Join(outside, "secret.txt")})
	if !strings.Contains(out, "permission denied: rule") || strings.Contains(out, "outside secret") {
		t.Errorf("read under Read(//…/**) in deny:\n%s", out)
	}
	out = p.tool(t, "grep", map[string]any{"pattern": "secret", "path": outside})
	if !strings.Contains(out, "permission denied: rule") || strings.Contains(out, "outside secret") {
		t.Errorf("grep under Read(//…/**) in deny:\n%s", out)
	}
	for _, tool := range []string{"mcp__fs__read_text_file", "mcp__fs__list_directory"} {
		out = p.tool(t, tool, map[string]any{"path": filepath.Join(p.dir, "main.go")})
		if !strings.Contains(out, `permission denied: rule "mcp__fs"`) {
			t.Errorf("%s under the server-level deny mcp__fs:\n%s", tool, out)
		}
	}
	// Claude's WebFetch is the harness's web_fetch: the domain deny refuses
	// the call before any request (the host does not even resolve here).
	out = p.tool(t, "web_fetch", map[string]any{"url": "https://example.com/page"})
	if !strings.Contains(out, `permission denied: rule "WebFetch(domain:example.com)"`) && !strings.Contains(out, `permission denied: rule "web_fetch(domain:example.com)"`) {
		t.Errorf("web_fetch under the deny WebFetch(domain:example.com):\n%s", out)
	}
	if strings.Contains(out, "names Claude Code's WebFetch tool") {
		t.Errorf("the WebFetch rule is still reported as governing nothing:\n%s", out)
	}
}

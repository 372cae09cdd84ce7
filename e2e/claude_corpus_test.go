package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// useCorpus puts the settings file and hook scripts of corpus case name
// (testdata/claude-corpus/NAME, written in the shapes of public
// .claude/settings.json files) into the project's .claude directory.
func useCorpus(t *testing.T, p *project, name string) string {
	t.Helper()
	src := filepath.Join("testdata", "claude-corpus", name)
	b, err := os.ReadFile(filepath.Join(src, "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(p.dir, ".claude", "settings.json")
	writeFile(t, settings, string(b))
	scripts, err := os.ReadDir(filepath.Join(src, "hooks"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scripts {
		b, err := os.ReadFile(filepath.Join(src, "hooks", s.Name()))
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(p.dir, ".claude", "hooks", s.Name())
		writeFile(t, dst, string(b))
		if err := os.Chmod(dst, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return settings
}

// mustContain fails for each want out lacks.
func mustContain(t *testing.T, what, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("%s: no %q in:\n%s", what, w, out)
		}
	}
}

// TestClaudeSettingsCorpus loads five settings files in the shapes public
// repositories have, with their hook scripts (bash + jq, python), through
// the real binary on the default manifest (headless, no -y), and checks
// the behaviour Claude Code's documentation describes.
func TestClaudeSettingsCorpus(t *testing.T) {
	needTools(t, "bwrap", "jq", "python3", "rg")

	// Many hook events and keys the harness does not implement: nothing
	// stops a command; each is one warning at its FILE:LINE:COL; the events
	// the harness fires run the scripts.
	t.Run("many-events", func(t *testing.T) {
		p := newProject(t, map[string]string{"main.go": "package main\n"})
		settings := useCorpus(t, p, "many-events")
		out := p.tool(t, "bash", map[string]any{"command": "echo tool-ran"})
		mustContain(t, "harness tool bash", out, "tool-ran",
			settings+":4:3: statusLine: the harness does not implement this setting; ignored",
			settings+":5:3: enabledPlugins: ",
			settings+":6:3: includeCoAuthoredBy: ",
			settings+":9:5: permissions.disableBypassPermissionsMode: ",
			settings+":31:5: hooks.TeammateIdle: the harness does not fire this hook event",
			settings+":26:19: hooks.Stop[1].hooks[0].type: the harness runs only command hooks",
			settings+":3:3: model: \"opus\" names no model route")
		if strings.Contains(out, "invalid config") {
			t.Errorf("a settings key stopped the command:\n%s", out)
		}
		if strings.Contains(out, `rule "WebSearch"`) {
			t.Errorf("WebSearch (the harness's web_search) is reported as a missing tool:\n%s", out)
		}
		o := p.run("hello", answer("Hi."))
		o.mustSucceed(t, "Hi.")
		log, err := os.ReadFile(filepath.Join(p.dir, "events.log"))
		if err != nil {
			t.Fatal(err)
		}
		mustContain(t, "events.log", string(log),
			`{"event":"SessionStart","source":"startup","reason":null,"mode":"acceptEdits"}`,
			`{"event":"Stop","source":null,"reason":null,"mode":"acceptEdits"}`,
			`{"event":"SessionEnd","source":null,"reason":"other","mode":"acceptEdits"}`)
	})

	// dontAsk: what would be asked is denied; allow rules (Edit(/internal/**)
	// relative to the project root), the sandbox and deny rules as in
	// Claude Code; a python PreToolUse validator blocks with exit 2 and is
	// told the real mode.
	t.Run("dontask", func(t *testing.T) {
		p := newProject(t, map[string]string{"go.mod": "module x\n", "main.go": "package main\n", "internal/a.go": "package internal\n"})
		useCorpus(t, p, "dontask")
		out := p.tool(t, "write", map[string]any{"file_path": "main.go", "content": "package changed\n"})
		mustContain(t, "write main.go (dontAsk)", out, "the permission mode is dontAsk: what would be asked is denied", `The tool "write" was not run.`)
		if b, _ := os.ReadFile(filepath.Join(p.dir, "main.go")); string(b) != "package main\n" {
			t.Errorf("dontAsk let write change main.go: %q", b)
		}
		p.tool(t, "write", map[string]any{"file_path": "internal/a.go", "content": "package internal // edited\n"})
		if b, _ := os.ReadFile(filepath.Join(p.dir, "internal", "a.go")); string(b) != "package internal // edited\n" {
			t.Errorf("Edit(/internal/**) in allow did not let write run in dontAsk: %q", b)
		}
		out = p.tool(t, "bash", map[string]any{"command": "rm -rf build"})
		mustContain(t, "bash rm -rf", out, "Blocked: recursive forced delete (dontAsk mode)")
		out = p.tool(t, "bash", map[string]any{"command": "git push origin main"})
		mustContain(t, "bash git push", out, `permission denied: rule "Bash(git push:*)"`)
		out = p.tool(t, "bash", map[string]any{"command": "echo sandboxed-ok"})
		mustContain(t, "bash echo (sandboxed)", out, "sandboxed-ok")
	})

	// A server-level deny (mcp__fs) refuses every tool of that server; the
	// other server's tools run under mcp__docs__*, except a read of a path
	// a Read rule denies; a bash + jq PreToolUse
	// hook matched by mcp__.* sees them by Claude's mcp__server__tool names.
	t.Run("mcp-server", func(t *testing.T) {
		needTools(t, "node")
		mcpServer, err := filepath.Abs("../plugins/mcp/testdata/npm/node_modules/.bin/mcp-server-filesystem")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(mcpServer); err != nil {
			missing(t, "the MCP filesystem server is not installed: npm ci --prefix plugins/mcp/testdata/npm")
		}
		p := newProject(t, map[string]string{"notes.md": "the notes\n", "private/plan.md": "the plan\n"})
		useCorpus(t, p, "mcp-server")
		writeFile(t, filepath.Join(p.home, ".config", "harness", "harness.yml"),
			fmt.Sprintf("- id: mcp\n  config: {servers: {fs: {command: %[1]s, args: [%[2]s]}, docs: {command: %[1]s, args: [%[2]s]}}}\n", mcpServer, p.dir))
		for _, tool := range []string{"mcp__fs__read_text_file", "mcp__fs__write_file"} {
			out := p.tool(t, tool, map[string]any{"path": filepath.Join(p.dir, "notes.md"), "content": "x"})
			mustContain(t, tool, out, `permission denied: rule "mcp__fs"`)
		}
		out := p.tool(t, "mcp__docs__read_text_file", map[string]any{"path": filepath.Join(p.dir, "notes.md")})
		mustContain(t, "mcp__docs__read_text_file", out, "the notes")
		// A Read deny governs the read-only MCP tool by its path.
		out = p.tool(t, "mcp__docs__read_text_file", map[string]any{"path": filepath.Join(p.dir, "private", "plan.md")})
		mustContain(t, "mcp__docs__read_text_file private/plan.md", out, `permission denied: rule "Read(./private/**)"`)
		if strings.Contains(out, "the plan") {
			t.Errorf("the MCP server read private/plan.md:\n%s", out)
		}
		// PreToolUse hooks run before the permission rules, as in Claude
		// Code: the audit sees the denied calls too.
		log, _ := os.ReadFile(filepath.Join(p.dir, "mcp-audit.log"))
		if string(log) != "fs read_text_file\nfs write_file\ndocs read_text_file\ndocs read_text_file\n" {
			t.Errorf("mcp-audit.log = %q, want the three calls by server and tool", log)
		}
	})

	// Edit denies govern write and edit; Read denies govern read and grep;
	// a PreToolUse JSON deny protects lock files; an ask rule is refused
	// headless, naming it.
	t.Run("edit-denies", func(t *testing.T) {
		p := newProject(t, map[string]string{
			"package.json": "{}\n", "package-lock.json": "{}\n", "config/prod.yml": "db: x\n", "secrets/k": "key\n",
			".github/workflows/ci.yml": "on: push\n",
		})
		useCorpus(t, p, "edit-denies")
		for _, c := range []struct {
			tool string
			args map[string]any
			want string
		}{
			{"write", map[string]any{"file_path": "package.json", "content": "{\"x\":1}\n"}, `permission denied: rule "Edit(./package.json)"`},
			{"edit", map[string]any{"file_path": "package.json", "old_string": "{}", "new_string": "{\"x\":1}"}, `permission denied: rule "Edit(./package.json)"`},
			{"write", map[string]any{"file_path": ".github/workflows/ci.yml", "content": "on: pull_request\n"}, "/.github/**)\" in the deny list"},
			{"write", map[string]any{"file_path": "package-lock.json", "content": "{\"lock\":2}\n"}, "lock files are generated: " + filepath.Join(p.dir, "package-lock.json")},
			{"read", map[string]any{"file_path": "config/prod.yml"}, `permission denied: rule "Read(./config/prod.yml)"`},
			{"grep", map[string]any{"pattern": "key", "path": "secrets"}, `permission denied: rule "Read(./secrets/**)"`},
			{"bash", map[string]any{"command": "npm publish --dry-run"}, `rule "Bash(npm publish:*)" is in the ask list`},
		} {
			out := p.tool(t, c.tool, c.args)
			mustContain(t, fmt.Sprintf("%s %v", c.tool, c.args), out, c.want)
		}
		for name, want := range map[string]string{"package.json": "{}\n", "package-lock.json": "{}\n", ".github/workflows/ci.yml": "on: push\n"} {
			if b, _ := os.ReadFile(filepath.Join(p.dir, name)); string(b) != want {
				t.Errorf("%s changed: %q", name, b)
			}
		}
		p.tool(t, "write", map[string]any{"file_path": "src/app.ts", "content": "export {}\n"})
		if _, err := os.Stat(filepath.Join(p.dir, "src", "app.ts")); err != nil {
			t.Errorf("write src/app.ts (no rule, acceptEdits): %v", err)
		}
	})

	// PostToolUse hooks that read Claude's tool_response: a bash + jq
	// formatter (tool_response.filePath) and a python test reminder
	// (tool_response.stdout); both reach the model.
	t.Run("reminders", func(t *testing.T) {
		needTools(t, "gofmt")
		p := newProject(t, map[string]string{"go.mod": "module x\n"})
		// The hook runs gofmt outside the sandbox, as Claude Code runs it;
		// the user has Go's telemetry off, so gofmt writes nothing in HOME.
		writeFile(t, filepath.Join(p.home, ".config", "go", "telemetry", "mode"), "off\n")
		useCorpus(t, p, "reminders")
		o := p.run("write main and run the tests",
			call("w1", "write", map[string]any{"file_path": "main.go", "content": "package main\nfunc main(){println(\"hi\")}\n"}),
			bash("b1", `printf -- '--- FAIL: TestParse (0.00s)\n--- FAIL: TestFormat (0.01s)\nFAIL\n'`, "run the tests"),
			answer("Done."),
		)
		o.mustSucceed(t, "Done.")
		if b, _ := os.ReadFile(filepath.Join(p.dir, "main.go")); string(b) != "package main\n\nfunc main() { println(\"hi\") }\n" {
			t.Errorf("the formatter hook did not run on main.go: %q", b)
		}
		for _, want := range []string{"gofmt ran on main.go", "Failing tests: TestParse, TestFormat"} {
			if !o.modelSaw(t, want) {
				t.Errorf("the model never got %q\nstderr: %s", want, o.stderr)
			}
		}
	})
}

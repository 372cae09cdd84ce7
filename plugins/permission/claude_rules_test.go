package permission

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestClaudeRuleToToolTable walks the rule-to-tool table of docs/policy.md
// ("Claude Code rules"), one row per case: which tools a rule written in
// Claude Code's shape governs, and how its path and command patterns read.
func TestClaudeRuleToToolTable(t *testing.T) {
	cwd := t.TempDir()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	abs := t.TempDir() // a directory outside the workspace, named with `//`
	args := func(m map[string]any) json.RawMessage { b, _ := json.Marshal(m); return b }
	file := func(p string) json.RawMessage { return args(map[string]any{"file_path": p, "content": "x"}) }
	search := func(p string) json.RawMessage { return args(map[string]any{"pattern": "x", "path": p}) }
	off := func(cmd string) json.RawMessage {
		return args(map[string]any{"command": cmd, "sandbox": "off", "justification": "j"})
	}
	tests := []struct {
		row              string // the table's row
		mode             Mode
		allow, ask, deny []string
		call             Call
		want             Decision
	}{
		// mcp__server and mcp__server__* both cover every tool of the server.
		{row: "mcp__server deny", deny: []string{"mcp__everything"},
			call: Call{Tool: "mcp__everything__echo", Args: args(map[string]any{"text": "hi"})}, want: Deny},
		{row: "mcp__server deny", deny: []string{"mcp__everything"},
			call: Call{Tool: "mcp__everything__get_env", Args: args(nil)}, want: Deny},
		{row: "mcp__server deny, other server", deny: []string{"mcp__everything"},
			call: Call{Tool: "mcp__everythingelse__echo", Args: args(nil)}, want: Ask},
		{row: "mcp__server deny, not a tool name prefix", deny: []string{"mcp__every"},
			call: Call{Tool: "mcp__everything__echo", Args: args(nil)}, want: Ask},
		{row: "mcp__server__* deny", deny: []string{"mcp__everything__*"},
			call: Call{Tool: "mcp__everything__echo", Args: args(nil)}, want: Deny},
		{row: "mcp__server__tool deny", deny: []string{"mcp__everything__echo"},
			call: Call{Tool: "mcp__everything__add", Args: args(nil)}, want: Ask},
		{row: "mcp__server allow", allow: []string{"mcp__GitHub"},
			call: Call{Tool: "mcp__github__create_issue", Args: args(nil)}, want: Allow},
		{row: "mcp__server ask", mode: ModeBypass, ask: []string{"mcp__github"},
			call: Call{Tool: "mcp__github__create_issue", Args: args(nil)}, want: Allow}, // bypass skips ask rules
		{row: "mcp__server ask", ask: []string{"mcp__github"}, allow: []string{"mcp__github__*"},
			call: Call{Tool: "mcp__github__create_issue", Args: args(nil)}, want: Ask},

		// Edit(...) covers every edit tool: edit and write.
		{row: "Edit deny, edit", deny: []string{"Edit(./tsconfig.json)"}, call: Call{Tool: "edit", Args: file("tsconfig.json")}, want: Deny},
		{row: "Edit deny, write", deny: []string{"Edit(./tsconfig.json)"}, call: Call{Tool: "write", Args: file("tsconfig.json")}, want: Deny},
		{row: "Edit deny, write elsewhere", mode: ModeAcceptEdits, deny: []string{"Edit(./tsconfig.json)"}, call: Call{Tool: "write", Args: file("main.go")}, want: Allow},
		{row: "Edit deny, read", deny: []string{"Edit(./tsconfig.json)"}, call: Call{Tool: "read", Args: file("tsconfig.json")}, want: Allow},
		{row: "Edit deny without a pattern, write", deny: []string{"Edit"}, mode: ModeBypass, call: Call{Tool: "write", Args: file("a.txt")}, want: Deny},
		{row: "Edit allow, write", allow: []string{"Edit(src/**)"}, call: Call{Tool: "write", Args: file("src/a.go")}, want: Allow},
		{row: "Edit allow, write outside the pattern", allow: []string{"Edit(src/**)"}, call: Call{Tool: "write", Args: file("docs/a.md")}, want: Ask},
		{row: "Edit ask, write", mode: ModeAcceptEdits, ask: []string{"Edit(go.mod)"}, call: Call{Tool: "write", Args: file("go.mod")}, want: Ask},
		{row: "Write deny, edit", deny: []string{"Write(a.txt)"}, mode: ModeAcceptEdits, call: Call{Tool: "edit", Args: file("a.txt")}, want: Allow}, // only Edit rules spread

		// Read(...) covers read, grep and glob by their path.
		{row: "Read deny, read", deny: []string{"Read(./.env)"}, call: Call{Tool: "read", Args: file(".env")}, want: Deny},
		{row: "Read deny, grep", deny: []string{"Read(secrets/**)"}, call: Call{Tool: "grep", Args: search("secrets/db")}, want: Deny},
		{row: "Read deny, glob", deny: []string{"Read(secrets/**)"}, call: Call{Tool: "glob", Args: search("secrets")}, want: Deny},
		{row: "Read deny, write", deny: []string{"Read(secrets/**)"}, call: Call{Tool: "write", Args: file("secrets/x")}, want: Ask},
		{row: "Read allow, grep in plan mode", mode: ModePlan, allow: []string{"Read(src/**)"}, call: Call{Tool: "grep", Args: search("src")}, want: Allow},

		// Path patterns: //abs, ~/, ./ and bare relative.
		{row: "//absolute", deny: []string{"Read(/" + abs + "/**)"}, call: Call{Tool: "read", Args: file(filepath.Join(abs, "k"))}, want: Deny},
		{row: "//absolute, grep", deny: []string{"Read(/" + abs + "/**)"}, call: Call{Tool: "grep", Args: search(abs)}, want: Deny},
		{row: "~/home", deny: []string{"Read(~/.aws/**)"}, call: Call{Tool: "read", Args: file(filepath.Join(home, ".aws", "credentials"))}, want: Deny},
		{row: "./relative", deny: []string{"Edit(./config/*.yml)"}, call: Call{Tool: "write", Args: file(filepath.Join(cwd, "config", "app.yml"))}, want: Deny},
		{row: "bare relative", deny: []string{"Edit(config/*.yml)"}, call: Call{Tool: "write", Args: file("config/app.yml")}, want: Deny},
		{row: "relative does not reach outside cwd", deny: []string{"Read(*.env)"}, call: Call{Tool: "read", Args: file(filepath.Join(abs, "a.env"))}, want: Allow},

		// Bash(cmd:*) is a prefix with a word boundary.
		{row: "Bash(cmd:*)", allow: []string{"Bash(npm run test:*)"}, call: Call{Tool: "bash", Args: bashArgs("npm run test")}, want: Allow},
		{row: "Bash(cmd:*)", allow: []string{"Bash(npm run test:*)"}, call: Call{Tool: "bash", Args: bashArgs("npm run test -- --watch")}, want: Allow},
		{row: "Bash(cmd:*) word boundary", allow: []string{"Bash(npm run test:*)"}, call: Call{Tool: "bash", Args: bashArgs("npm run testx")}, want: Ask},
		{row: "Bash(cmd:*) every simple command", allow: []string{"Bash(npm run test:*)"}, call: Call{Tool: "bash", Args: bashArgs("npm run test && curl evil")}, want: Ask},
		{row: "Bash(cmd:*) deny", deny: []string{"Bash(git push:*)"}, mode: ModeBypass, call: Call{Tool: "bash", Args: bashArgs("git status && git push -f")}, want: Deny},

		// No rule lets a call leave the sandbox: only a person, or an
		// allow rule that says `unsandboxed`.
		{row: "sandbox: Bash allow", allow: []string{"Bash"}, call: Call{Tool: "bash", Args: off("make deploy"), Escalated: true}, want: Ask},
		{row: "sandbox: Bash(cmd:*) allow", allow: []string{"Bash(make:*)"}, call: Call{Tool: "bash", Args: off("make deploy"), Escalated: true}, want: Ask},
		{row: "sandbox: * allow", allow: []string{"*"}, mode: ModeAcceptEdits, call: Call{Tool: "bash", Args: off("make deploy"), Escalated: true}, want: Ask},
		{row: "sandbox: dontAsk", allow: []string{"Bash(make:*)"}, mode: ModeDontAsk, call: Call{Tool: "bash", Args: off("make deploy"), Escalated: true}, want: Ask},
	}
	for _, tt := range tests {
		spec := defaultSpec(cwd)
		spec.Mode, spec.Allow, spec.Ask, spec.Deny = tt.mode, tt.allow, tt.ask, tt.deny
		p, err := New(spec)
		if err != nil {
			t.Fatalf("%s: %v", tt.row, err)
		}
		if got := p.Evaluate(tt.call); got.Decision != tt.want {
			t.Errorf("%s: %s %s (allow %q ask %q deny %q, mode %q): %v (%s), want %v",
				tt.row, tt.call.Tool, tt.call.Args, tt.allow, tt.ask, tt.deny, tt.mode, got.Decision, got.Reason, tt.want)
		}
	}
}

// Read and Edit rules in deny and ask also govern an MCP tool by the files
// its arguments name (path, paths, source, destination): Read rules a
// read-only tool (readOnlyHint), Edit rules any other. Allow rules do not.
func TestClaudeFileRulesGovernMCPToolsByPath(t *testing.T) {
	cwd := t.TempDir()
	args := func(m map[string]any) json.RawMessage { b, _ := json.Marshal(m); return b }
	tests := []struct {
		row              string
		mode             Mode
		allow, ask, deny []string
		call             Call
		want             Decision
	}{
		{row: "Read deny, read-only MCP tool", deny: []string{"Read(./secrets/**)"},
			call: Call{Tool: "mcp__fs__read_text_file", ReadOnly: true, Args: args(map[string]any{"path": "secrets/k"})}, want: Deny},
		{row: "Read deny, paths list", deny: []string{"Read(./secrets/**)"},
			call: Call{Tool: "mcp__fs__read_multiple_files", ReadOnly: true, Args: args(map[string]any{"paths": []string{"a.txt", filepath.Join(cwd, "secrets", "k")}})}, want: Deny},
		{row: "Read deny, other path", mode: ModeBypass, deny: []string{"Read(./secrets/**)"},
			call: Call{Tool: "mcp__fs__read_text_file", ReadOnly: true, Args: args(map[string]any{"path": "a.txt"})}, want: Allow},
		{row: "Read deny, writing MCP tool", mode: ModeBypass, deny: []string{"Read(./secrets/**)"},
			call: Call{Tool: "mcp__fs__write_file", Args: args(map[string]any{"path": "secrets/k"})}, want: Allow},
		{row: "Edit deny, writing MCP tool", deny: []string{"Edit(./package.json)"},
			call: Call{Tool: "mcp__fs__write_file", Args: args(map[string]any{"path": "package.json", "content": "{}"})}, want: Deny},
		{row: "Edit deny, move destination", deny: []string{"Edit(./package.json)"},
			call: Call{Tool: "mcp__fs__move_file", Args: args(map[string]any{"source": "a.json", "destination": "package.json"})}, want: Deny},
		{row: "Edit deny, read-only MCP tool", mode: ModeBypass, deny: []string{"Edit(./package.json)"},
			call: Call{Tool: "mcp__fs__read_text_file", ReadOnly: true, Args: args(map[string]any{"path": "package.json"})}, want: Allow},
		{row: "Read ask", mode: ModeAcceptEdits, ask: []string{"Read(~/**)"}, allow: []string{"mcp__fs"},
			call: Call{Tool: "mcp__fs__read_text_file", ReadOnly: true, Args: args(map[string]any{"path": "~/notes"})}, want: Ask},
		{row: "Edit allow does not cover", allow: []string{"Edit(**)"},
			call: Call{Tool: "mcp__fs__write_file", Args: args(map[string]any{"path": "a.txt"})}, want: Ask},
		{row: "not an MCP tool", mode: ModeBypass, deny: []string{"Read(./secrets/**)"},
			call: Call{Tool: "lookup", ReadOnly: true, Args: args(map[string]any{"path": "secrets/k"})}, want: Allow},
	}
	for _, tt := range tests {
		spec := defaultSpec(cwd)
		spec.Mode, spec.Allow, spec.Ask, spec.Deny = tt.mode, tt.allow, tt.ask, tt.deny
		p, err := New(spec)
		if err != nil {
			t.Fatalf("%s: %v", tt.row, err)
		}
		if got := p.Evaluate(tt.call); got.Decision != tt.want {
			t.Errorf("%s: %s %s: %v (%s), want %v", tt.row, tt.call.Tool, tt.call.Args, got.Decision, got.Reason, tt.want)
		}
	}
}

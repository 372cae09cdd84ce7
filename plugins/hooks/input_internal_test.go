package hooks

import "testing"

// tool_input.file_path reaches hooks absolute, as Claude Code documents;
// the arguments Claude Code names otherwise have Claude's names (Bash's
// timeout, Grep's glob), and a hook's updatedInput naming them maps back;
// other arguments and absolute paths are passed as written.
func TestToolInputFilePathIsAbsolute(t *testing.T) {
	t.Parallel()
	h := &runner{cwd: "/work/repo"}
	for _, tt := range []struct{ tool, in, want string }{
		{"write", `{"file_path":"src/a.go","content":"x"}`, `{"content":"x","file_path":"/work/repo/src/a.go"}`},
		{"read", `{"file_path":"/etc/hosts"}`, `{"file_path":"/etc/hosts"}`},
		{"bash", `{"command":"ls"}`, `{"command":"ls"}`},
		{"edit", `{"file_path":"../up.txt","old_string":""}`, `{"file_path":"/work/up.txt","old_string":""}`},
		{"bash", `{"command":"sleep 1","timeoutMs":5000}`, `{"command":"sleep 1","timeout":5000}`},
		{"grep", `{"pattern":"x","include":"*.go"}`, `{"glob":"*.go","pattern":"x"}`},
		{"mcp__x__y", `{"include":"*.go"}`, `{"include":"*.go"}`},
	} {
		if got := string(h.toolInput(tt.tool, tt.in)); got != tt.want {
			t.Errorf("toolInput(%s, %s) = %s, want %s", tt.tool, tt.in, got, tt.want)
		}
	}
	for _, tt := range []struct{ tool, name, want string }{
		{"bash", "timeout", "timeoutMs"}, {"grep", "glob", "include"}, {"bash", "command", "command"}, {"glob", "pattern", "pattern"},
	} {
		if got := h.harnessArgName(tt.tool, tt.name); got != tt.want {
			t.Errorf("harnessArgName(%s, %s) = %s, want %s", tt.tool, tt.name, got, tt.want)
		}
	}
	own := &runner{cwd: "/w", harnessNames: true}
	if got := string(own.toolInput("grep", `{"include":"*.go"}`)); got != `{"include":"*.go"}` {
		t.Errorf("harnessToolNames: toolInput renamed: %s", got)
	}
}

// A matcher written for Claude Code (`Edit|Write|MultiEdit`, `Bash`,
// `mcp__github__.*`) selects the harness tools by their Claude names.
func TestClaudeMatchersSelectHarnessTools(t *testing.T) {
	t.Parallel()
	h, err := newRunner(Config{Cwd: "/", Hooks: Events{PreToolUse: []MatcherGroup{
		{Matcher: "Edit|Write|MultiEdit", Hooks: []CommandHook{{Command: "guard"}}},
		{Matcher: "Bash", Hooks: []CommandHook{{Command: "validator"}}},
		{Matcher: "mcp__github__.*", Hooks: []CommandHook{{Command: "gh"}}},
	}}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for tool, want := range map[string]string{"edit": "guard", "write": "guard", "bash": "validator", "read": "", "mcp__github__create_issue": "gh"} {
		got := ""
		for _, hk := range h.toolHooks(EventPreToolUse, tool) {
			got += hk.Command
		}
		if got != want {
			t.Errorf("%s selects %q, want %q", tool, got, want)
		}
	}
}

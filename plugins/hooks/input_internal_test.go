package hooks

import "testing"

// tool_input.file_path reaches hooks absolute, as Claude Code documents;
// other arguments and absolute paths are passed as written.
func TestToolInputFilePathIsAbsolute(t *testing.T) {
	t.Parallel()
	h := &runner{cwd: "/work/repo"}
	for in, want := range map[string]string{
		`{"file_path":"src/a.go","content":"x"}`:    `{"content":"x","file_path":"/work/repo/src/a.go"}`,
		`{"file_path":"/etc/hosts"}`:                `{"file_path":"/etc/hosts"}`,
		`{"command":"ls"}`:                          `{"command":"ls"}`,
		`{"file_path":"../up.txt","old_string":""}`: `{"file_path":"/work/up.txt","old_string":""}`,
	} {
		if got := string(h.toolInput(in)); got != want {
			t.Errorf("toolInput(%s) = %s, want %s", in, got, want)
		}
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

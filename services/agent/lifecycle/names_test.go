package lifecycle_test

import (
	"testing"

	"github.com/dshgo/harness/services/agent/lifecycle"
)

// The built-in tools with a Claude Code counterpart get Claude's name (in
// hook payloads and the Claude-format transcript); others keep theirs.
func TestClaudeToolNames(t *testing.T) {
	for harness, claude := range map[string]string{
		"bash": "Bash", "read": "Read", "write": "Write", "edit": "Edit", "grep": "Grep", "glob": "Glob",
		"todo_write": "TodoWrite", "task": "Task", "bash_output": "BashOutput", "kill_shell": "KillShell",
		"mcp__fs__read_file": "mcp__fs__read_file", "send_message": "send_message",
	} {
		if got := lifecycle.ClaudeToolName(harness); got != claude {
			t.Errorf("ClaudeToolName(%q) = %q, want %q", harness, got, claude)
		}
	}
}

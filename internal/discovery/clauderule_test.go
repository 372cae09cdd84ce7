package discovery

import "testing"

// claudeRule reads a settings file's rule with Claude Code's meaning: `/p`
// is relative to the project root (the root's glob metacharacters taken
// literally), `//p` absolute, other forms unchanged; Claude's tool names
// are the harness's.
func TestClaudeRuleRewrite(t *testing.T) {
	for _, tt := range []struct{ in, root, want string }{
		{"Edit(/src/**/*.ts)", "/home/me/proj", "Edit(/home/me/proj/src/**/*.ts)"},
		{"Read(/.env)", "/home/me/a[1]*", `Read(/home/me/a\[1\]\*/.env)`},
		{"Read(//etc/passwd)", "/p", "Read(//etc/passwd)"},
		{"Read(~/.ssh/**)", "/p", "Read(~/.ssh/**)"},
		{"Edit(./tsconfig.json)", "/p", "Edit(./tsconfig.json)"},
		{"Edit(docs/**)", "/p", "Edit(docs/**)"},
		{"Bash(/usr/bin/make:*)", "/p", "Bash(/usr/bin/make:*)"}, // not a path rule
		{"TodoWrite", "/p", "todo_write"},
		{"Agent(explorer)", "/p", "task(explorer)"},
		{"mcp__github", "/p", "mcp__github"},
		{"WebFetch(domain:docs.example.com)", "/p", "web_fetch(domain:docs.example.com)"},
		{"WebFetch", "/p", "web_fetch"},
		{"WebSearch", "/p", "web_search"},
	} {
		if got, _ := claudeRule(tt.in, tt.root); got != tt.want {
			t.Errorf("claudeRule(%q, %q) = %q, want %q", tt.in, tt.root, got, tt.want)
		}
	}
	if _, why := claudeRule("NotebookEdit(x.ipynb)", "/p"); why == "" {
		t.Error("a NotebookEdit rule is not reported as governing nothing")
	}
	if _, why := claudeRule("WebFetch(domain:example.com)", "/p"); why != "" {
		t.Errorf("a WebFetch rule is reported: %s", why)
	}
	if _, why := claudeRule("Edit(x)", "/p"); why != "" {
		t.Errorf("Edit rule reported: %s", why)
	}
}

package tui

import "testing"

// Shift+Tab walks default → acceptEdits → plan → default; a session
// opened in bypassPermissions or dontAsk keeps that mode as the fourth
// stop, and a mode outside the cycle goes to its first stop.
func TestNextModeCyclesLikeClaudeCode(t *testing.T) {
	for _, tt := range []struct{ cur, start, want string }{
		{"default", "default", "acceptEdits"},
		{"acceptEdits", "default", "plan"},
		{"plan", "default", "default"},
		{"plan", "plan", "default"},
		{"plan", "bypassPermissions", "bypassPermissions"},
		{"bypassPermissions", "bypassPermissions", "default"},
		{"dontAsk", "default", "default"},
	} {
		if got := nextMode(tt.cur, tt.start); got != tt.want {
			t.Errorf("nextMode(%s, start %s) = %s, want %s", tt.cur, tt.start, got, tt.want)
		}
	}
}

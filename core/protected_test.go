package core_test

import (
	"slices"
	"testing"

	"github.com/dshgo/harness/core"
)

// TestProtectedPathsListAndMatch: the list is the harness's configuration,
// Claude Code's, MCP's and git's trusted files; a directory entry covers
// everything in it and nothing beside it; each call returns a copy.
func TestProtectedPathsListAndMatch(t *testing.T) {
	t.Parallel()
	want := []string{"harness.yml", "harness.patch.yml", ".harness/", ".claude/", ".mcp.json", ".git/config", ".git/hooks/", ".gitmodules"}
	got := core.ProtectedPaths()
	if !slices.Equal(got, want) {
		t.Fatalf("ProtectedPaths() = %q", got)
	}
	got[0] = "changed"
	if core.ProtectedPaths()[0] != "harness.yml" {
		t.Fatal("ProtectedPaths returned the list itself, not a copy")
	}
	for _, rel := range []string{"harness.yml", "harness.patch.yml", ".harness", ".harness/agents/x.md", ".claude", ".claude/settings.json",
		".mcp.json", ".git/config", ".git/hooks", ".git/hooks/pre-commit", ".gitmodules"} {
		if !core.IsProtectedPath(rel) {
			t.Errorf("IsProtectedPath(%q) = false", rel)
		}
	}
	for _, rel := range []string{"", ".", "harness.yaml", "sub/harness.yml", ".harnessx", ".claudex/settings.json", ".git", ".git/HEAD",
		".git/config.lock", ".git/hooksx", ".gitmodules.bak", "x/.claude/settings.json", "harness.yml/x"} {
		if core.IsProtectedPath(rel) {
			t.Errorf("IsProtectedPath(%q) = true", rel)
		}
	}
}

func BenchmarkIsProtectedPath(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		core.IsProtectedPath(".git/hooks/pre-commit")
		core.IsProtectedPath("internal/cli/check.go")
	}
}

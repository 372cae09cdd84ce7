package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `harness prompt` shows the instruction files of the working directory
// (here a repository with AGENTS.md at its root and CLAUDE.md in a package),
// each under a heading naming it, verbatim (braces included).
func TestPromptShowsInstructionFiles(t *testing.T) {
	// Serial: t.Chdir (prompt has no --cwd; instructions reads the process's directory).
	repo := t.TempDir()
	for path, text := range map[string]string{
		"AGENTS.md":     "Use tabs. Keep {{this}} literal.",
		"pkg/CLAUDE.md": "In pkg, never panic.",
	} {
		p := filepath.Join(repo, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(repo, "pkg"))
	code, out, errOut := runPrompt(t, "plugins:\n  - name: systemprompt\n  - name: instructions\n    config: {userFile: \"-\"}\n")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	root, pkg := "## "+filepath.Join(repo, "AGENTS.md"), "## "+filepath.Join(repo, "pkg", "CLAUDE.md")
	i, j := strings.Index(out, root), strings.Index(out, pkg)
	if i < 0 || j < i || !strings.Contains(out, "Keep {{this}} literal.") || !strings.Contains(out, "In pkg, never panic.") {
		t.Fatalf("prompt lacks the files in order:\n%s", out)
	}
}

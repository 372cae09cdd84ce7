package tui_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/dshgo/harness/internal/tui"
)

// An absolute path gets git's a/ and b/ prefixes without a doubled slash.
func TestProposedDiffHeaderForAnAbsolutePath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "new.txt")
	args, _ := json.Marshal(map[string]string{"file_path": path, "content": "hello\n"})
	lines := tui.ProposedDiff("write", string(args), dir)
	if len(lines) < 2 {
		t.Fatalf("diff = %q", lines)
	}
	if want := "--- a" + path; lines[0] != want {
		t.Errorf("first header = %q, want %q", lines[0], want)
	}
	if want := "+++ b" + path; lines[1] != want {
		t.Errorf("second header = %q, want %q", lines[1], want)
	}
}

package tui_test

import (
	"path/filepath"
	"testing"

	"github.com/dshgo/harness/internal/tui"
	"github.com/dshgo/harness/services/tools"
)

// A diff's header has git's a/ and b/ prefixes: an absolute path outside
// the working directory without a doubled slash, a path under it relative
// to it.
func TestCardDiffHeader(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tt := range []struct{ path, cwd, want string }{
		{filepath.Join(dir, "new.txt"), "/elsewhere", "a" + filepath.Join(dir, "new.txt")},
		{filepath.Join(dir, "sub", "new.txt"), dir, "a/sub/new.txt"},
	} {
		p := tools.Presentation{ToolCallID: "c1", Status: tools.StatusPending, Content: []tools.ToolCallContent{tools.DiffContent(tt.path, nil, "hello\n")}}
		lines := tui.CardDiff(p, tt.cwd)
		if len(lines) < 2 || lines[0] != "--- "+tt.want || lines[1] != "+++ b"+tt.want[1:] {
			t.Errorf("%s in %s: diff = %q, want header %q", tt.path, tt.cwd, lines, tt.want)
		}
	}
}

package sandbox

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshgo/harness/core"
)

// TestSandboxGuardsTheSharedProtectedList: the paths bwrap binds and the
// Guard checks are exactly core.ProtectedPaths (the list the permission
// plugin asks for), under the workspace and each writable root; read-only
// mode protects nothing (it writes nowhere).
func TestSandboxGuardsTheSharedProtectedList(t *testing.T) {
	t.Parallel()
	ws, extra := t.TempDir(), t.TempDir()
	var want []string
	for _, root := range []string{ws, extra} {
		for _, p := range core.ProtectedPaths() {
			want = append(want, filepath.Join(root, strings.TrimSuffix(p, "/")))
		}
	}
	got := protectedIn(Request{Policy: Policy{Mode: ModeWorkspaceWrite, WritableRoots: []string{extra}}, Dir: ws})
	if !slices.Equal(got, want) {
		t.Fatalf("protectedIn =\n%q\nwant\n%q", got, want)
	}
	if got := protectedIn(Request{Policy: Policy{Mode: ModeReadOnly, WritableRoots: []string{extra}}, Dir: ws}); got != nil {
		t.Fatalf("read-only: %q", got)
	}
}

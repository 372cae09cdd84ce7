package toolbash

import (
	"strings"
	"testing"

	"github.com/dshgo/harness/services/subprocess"
)

// The sandbox's note goes only on a workspace-write command that failed
// with a read-only file system (or git's object directory it could not
// create): not on success, another failure, read-only mode or no sandbox.
func TestSandboxWriteHint(t *testing.T) {
	one, zero := 1, 0
	ww := &subprocess.SandboxPolicy{Mode: subprocess.SandboxWorkspaceWrite}
	erofs := Value{ExitCode: &one, Stderr: Stream{Text: "touch: cannot touch '/srv/x': Read-only file system\n"}}
	if h := sandboxWriteHint(erofs, ww, "/w"); !strings.Contains(h, "outside the directories it may write (/w,") || !strings.Contains(h, `"sandbox": "off"`) {
		t.Fatalf("hint = %q", h)
	}
	git := Value{ExitCode: &one, Stderr: Stream{Text: "error: remote unpack failed: unable to create temporary object directory\n"}}
	if sandboxWriteHint(git, ww, "/w") == "" {
		t.Fatal("no hint for git's refused push")
	}
	for name, tc := range map[string]struct {
		v Value
		p *subprocess.SandboxPolicy
	}{
		"success":     {Value{ExitCode: &zero, Stderr: erofs.Stderr}, ww},
		"other error": {Value{ExitCode: &one, Stderr: Stream{Text: "FAIL example.com/calc\n"}}, ww},
		"read-only":   {erofs, &subprocess.SandboxPolicy{Mode: subprocess.SandboxReadOnly}},
		"unsandboxed": {erofs, nil},
	} {
		if h := sandboxWriteHint(tc.v, tc.p, "/w"); h != "" {
			t.Errorf("%s: hint %q, want none", name, h)
		}
	}
}

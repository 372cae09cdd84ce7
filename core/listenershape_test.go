package core_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A listener of the wrong shape must fail to compile with a message that
// names an exported, documented type (`go doc core.WaterfallListener`), not
// an internal one.
func TestListenerShapeErrorNamesAnExportedType(t *testing.T) {
	t.Parallel()
	gobin, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no go command in CI")
		}
		t.Skip("no go command")
	}
	cmd := exec.Command(gobin, "vet", "./testdata/badlistener")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("the wrongly shaped listener compiled")
	}
	if !strings.Contains(string(out), "core.WaterfallListener[string, int]") {
		t.Fatalf("the compile error does not name core.WaterfallListener:\n%s", out)
	}
}

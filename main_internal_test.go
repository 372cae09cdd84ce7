package harness

import (
	"bytes"
	"strings"
	"testing"
)

// runIn runs the command line as Main would, in an empty directory (so no
// ./harness.yml is found and the binary's default manifest is used).
func runIn(t *testing.T, args []string, opts ...Option) (int, string, string) {
	t.Helper()
	t.Chdir(t.TempDir())
	t.Setenv("HARNESS_CONFIG", "")
	var o options
	for _, opt := range opts {
		opt.applyHarness(&o)
	}
	var stdout, stderr bytes.Buffer
	code := runMain(append([]string{"--no-claude-settings"}, args...), &stdout, &stderr, o)
	return code, stdout.String(), stderr.String()
}

// harness.Main(harness.WithPatch(...)) ships the default rows plus the
// binary's own: the embedded layer is composed over the default manifest,
// and `!append` extends the permission row's list.
func TestMainComposesEmbeddedPatchesOverTheDefault(t *testing.T) {
	rows := []byte("- insert:\n    - {id: todo2, name: tool-todo, disabled: true}\n- id: permission\n  config:\n    readOnlyTools: !append [word_count]\n")
	code, out, errOut := runIn(t, []string{"config"}, WithPatch("rows.yml", rows))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"id: todo2", "readOnlyTools: !append\n", "- word_count\n", "id: deepseek"} {
		if !strings.Contains(out, want) {
			t.Errorf("harness config does not show %q:\n%s", want, out)
		}
	}
}

func TestMainReportsABadEmbeddedPatchAndOptionsItDoesNotTake(t *testing.T) {
	code, _, errOut := runIn(t, []string{"config"}, WithPatch("rows.yml", []byte("- id: permission\n  config: {mode: !append [x]}\n")))
	if code != 2 || !strings.Contains(errOut, "rows.yml:2:") {
		t.Fatalf("exit %d, stderr %q: want 2 and rows.yml:2:…", code, errOut)
	}
	code, _, errOut = runIn(t, []string{"config"}, WithPatch("rows.yml", []byte("- {id: nope, disabled: true}\n")))
	if code != 2 || !strings.Contains(errOut, `rows.yml:1:3: patch: no row with id "nope"`) {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runIn(t, []string{"config"}, WithConfigFile("x.yml"))
	if code != 2 || !strings.Contains(errOut, "WithConfigFile is not an option of harness.Main") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

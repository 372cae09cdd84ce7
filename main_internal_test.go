package harness

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
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

// New composes the WithPatch layers over the manifest it starts from (here
// WithManifest); a config file replaces that manifest and its layers.
func TestNewComposesWithPatchOverTheDefault(t *testing.T) {
	rows := WithPatch("rows.yml", []byte("- insert:\n    - {id: timeout, name: tool-timeout}\n"))
	quiet := WithLogger(slog.New(slog.DiscardHandler))
	h, err := New(WithManifest([]byte("plugins:\n  - {id: tools, name: tools}\n")), rows, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range h.Loader.Status() {
		ids = append(ids, s.ID+":"+s.State)
	}
	if err := h.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if strings.Join(ids, " ") != "tools:active timeout:active" {
		t.Fatalf("rows %v", ids)
	}

	file := filepath.Join(t.TempDir(), "harness.yml")
	if err := os.WriteFile(file, []byte("plugins:\n  - {id: tools, name: tools}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err = New(WithConfigFile(file), rows, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer h.Stop(context.Background())
	if st := h.Loader.Status(); len(st) != 1 {
		t.Fatalf("with a config file: %d rows, want 1 (the embedded layer does not apply)", len(st))
	}
}

package cli_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/dshgo/harness"
	"github.com/dshgo/harness/internal/cli"
)

// The default harness's system prompt separates its sections by exactly
// one blank line: a section whose text ends in a newline (an embedded
// prompt file) must not add a second one.
func TestDefaultPromptHasSingleBlankLinesBetweenSections(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", dir)
	var out, errb bytes.Buffer
	env := &cli.Env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""), DefaultManifest: harness.DefaultManifest,
		LookupEnv: func(string) (string, bool) { return "", false }, Ctx: context.Background()}
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	if code := cli.Run([]string{"prompt"}, env); code != 0 {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	prompt := strings.TrimRight(out.String(), "\n")
	if strings.Count(prompt, "\n\n") < 5 {
		t.Fatalf("expected several sections:\n%s", prompt)
	}
	if i := strings.Index(prompt, "\n\n\n"); i >= 0 {
		t.Fatalf("two blank lines at byte %d, after %q", i, prompt[max(0, i-60):i])
	}
}

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

// The embedded default manifest without DEEPSEEK_API_KEY: `harness run`
// exits 2 and says exactly which variable (or harness.yml field) to set.
func TestDefaultManifestMissingDeepSeekKey(t *testing.T) {
	t.Setenv("DEEPSEEK_API_KEY", "")
	os.Unsetenv("DEEPSEEK_API_KEY")
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
	code := cli.Run([]string{"run", "hello"}, env)
	if code != 2 {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	last := errb.String()[strings.LastIndex(errb.String(), "harness: "):]
	if !strings.Contains(last, "set the environment variable DEEPSEEK_API_KEY") {
		t.Fatalf("stderr: %s", last)
	}
}

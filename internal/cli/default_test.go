package cli_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/dshgo/harness"
	"github.com/dshgo/harness/internal/cli"
	"github.com/dshgo/harness/plugins/std"
)

// runDefault runs the CLI on the embedded default manifest in a fresh
// directory (its state there too), with no environment variables.
func runDefault(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", dir)
	var out, errb bytes.Buffer
	env := &cli.Env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""), DefaultManifest: harness.DefaultManifest, Plugins: std.Plugins(),
		LookupEnv: func(string) (string, bool) { return "", false }, Ctx: context.Background()}
	t.Chdir(dir)
	code = cli.Run(args, env)
	return out.String(), errb.String(), code
}

// The embedded default manifest without DEEPSEEK_API_KEY: `harness run`
// exits 2 and says exactly which variable (or harness.yml field) to set,
// with no turn summary (no model call was made).
func TestDefaultManifestMissingDeepSeekKey(t *testing.T) {
	// Serial: t.Setenv (llm-openai and sessions-jsonl read the process environment).
	t.Setenv("DEEPSEEK_API_KEY", "")
	os.Unsetenv("DEEPSEEK_API_KEY")
	_, errOut, code := runDefault(t, "run", "hello")
	if code != 2 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	last := errOut[strings.LastIndex(errOut, "harness: "):]
	if !strings.Contains(last, "set the environment variable DEEPSEEK_API_KEY") {
		t.Fatalf("stderr: %s", last)
	}
	// No model call was made, so there is no "[1 step · 0 tokens …]"
	// summary: the error is the whole story.
	if strings.Contains(errOut, "step") || strings.Contains(errOut, "tokens") {
		t.Fatalf("a summary for a run that made no request:\n%s", errOut)
	}
}

// The default harness's system prompt separates its sections by exactly
// one blank line: a section whose text ends in a newline (an embedded
// prompt file) must not add a second one.
func TestDefaultPromptHasSingleBlankLinesBetweenSections(t *testing.T) {
	// Serial: t.Setenv and t.Chdir in runDefault.
	out, errOut, code := runDefault(t, "prompt")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	prompt := strings.TrimRight(out, "\n")
	if strings.Count(prompt, "\n\n") < 5 {
		t.Fatalf("expected several sections:\n%s", prompt)
	}
	if i := strings.Index(prompt, "\n\n\n"); i >= 0 {
		t.Fatalf("two blank lines at byte %d, after %q", i, prompt[max(0, i-60):i])
	}
}

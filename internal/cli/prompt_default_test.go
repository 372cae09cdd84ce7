package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness"
	"github.com/dshgo/harness/internal/cli"
	"github.com/dshgo/harness/plugins/std"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// On the default configuration `harness prompt` prints the system prompt a
// run sends, byte for byte: the identity line names the model route the
// session resolves, and no blank line is added at the end.
func TestPromptIsWhatTheDefaultRunSends(t *testing.T) {
	// Serial: t.Setenv and t.Chdir.
	work := t.TempDir()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("DEEPSEEK_API_KEY", "sk-test")
	t.Chdir(work)
	srv := llmtest.New(t, []llmtest.Turn{text("done")})
	patch := filepath.Join(t.TempDir(), "p.yml")
	if err := os.WriteFile(patch, []byte("- {id: deepseek, config: {baseURL: "+srv.URL+", maxRetries: 0}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cliRun := func(args ...string) string {
		var out, errb bytes.Buffer
		env := &cli.Env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""), DefaultManifest: harness.DefaultManifest, Plugins: std.Plugins(),
			LookupEnv: os.LookupEnv, Ctx: context.Background()}
		if code := cli.Run(args, env); code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, errb.String())
		}
		return out.String()
	}
	cliRun("run", "--patch", patch, "hello")
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	w, err := reqs[0].Wire()
	if err != nil || len(w.Messages) == 0 || w.Messages[0].Role != "system" {
		t.Fatalf("request: %v %+v", err, w.Messages)
	}
	var sent string
	if err := json.Unmarshal(w.Messages[0].Content, &sent); err != nil {
		t.Fatal(err)
	}
	printed := cliRun("prompt", "--patch", patch)
	if !strings.HasPrefix(printed, "You are an AI agent running in harness, using the model deepseek/") {
		t.Fatalf("identity line names no model:\n%.200s", printed)
	}
	want := sent
	if !strings.HasSuffix(want, "\n") {
		want += "\n"
	}
	if printed != want {
		t.Fatalf("harness prompt differs from the system prompt sent\nprinted %d bytes, sent %d bytes\nprinted tail %q\nsent tail %q", len(printed), len(sent), tail(printed), tail(sent))
	}
}

func tail(s string) string { return s[max(0, len(s)-80):] }

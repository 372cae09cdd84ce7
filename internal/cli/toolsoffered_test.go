package cli_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/internal/cli"
	"github.com/dshgo/harness/plugins/std"
)

// `harness check` reports tools that nothing offers to the model (no
// prompt-tools row): a warning without an agent row, an error (exit 2) with
// one, since the agent would refuse to run; with the row it is quiet.
func TestCheckReportsToolsNotOfferedToTheModel(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	base := "plugins:\n  - {id: prompt, name: systemprompt}\n  - {id: tools, name: tools}\n  - {id: greet, name: cli-test-greet}\n"
	agentRows := "  - {id: llm, name: llm}\n" +
		"  - {id: local, name: llm-openai, config: {provider: test, baseURL: 'http://127.0.0.1:9', models: [{name: m1, default: true}]}}\n" +
		"  - {id: sessions, name: sessions-jsonl, config: {stateDir: '" + state + "'}}\n" +
		"  - {id: agent, name: agent, config: {model: test}}\n"
	check := func(manifest string, args ...string) (int, string, string) {
		if args == nil {
			args = []string{"check"}
		}
		var out, errOut bytes.Buffer
		code := cli.Run(append(args, "--no-claude-settings"), &cli.Env{
			Stdout: &out, Stderr: &errOut, Stdin: strings.NewReader(""),
			DefaultManifest: []byte(manifest),
			Plugins:         append(std.Plugins(), core.Plugin(greetPlugin)),
			LookupEnv:       func(string) (string, bool) { return "", false },
			Getwd:           outsideRepo(t),
			Ctx:             context.Background(),
		})
		return code, out.String(), errOut.String()
	}
	code, out, errOut := check(base)
	if code != 0 || !strings.Contains(errOut, "harness: warning: 1 tool(s) are registered (greet) but no tool provider offers their schemas to the model: mount the prompt-tools plugin") {
		t.Fatalf("without an agent: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	code, out, errOut = check(base + agentRows)
	if code != 2 || !strings.Contains(errOut, "the agent would refuse to run: 1 tool(s) are registered (greet)") {
		t.Fatalf("with an agent: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	// harness run refuses before any model request, as a configuration error.
	code, out, errOut = check(base+agentRows, "run", "hello")
	if code != 2 || !strings.Contains(errOut, "mount the prompt-tools plugin") {
		t.Fatalf("run: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	code, out, errOut = check(base + agentRows + "  - {id: prompt-tools, name: prompt-tools}\n")
	if code != 0 || errOut != "" {
		t.Fatalf("with prompt-tools: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
}

package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/internal/cli"
	"github.com/dshgo/harness/services/tools"
)

type greetArgs struct {
	Name  string `json:"name" jsonschema:"description=Who to greet"`
	Times int    `json:"times,omitempty" jsonschema:"minimum=1"`
}

var greetPlugin = core.Define("cli-test-greet", func(c *core.Context, _ struct{}) error {
	return tools.Register(c,
		tools.Define("greet", "Greet someone.\nSecond line.", func(_ context.Context, _ *tools.Execution, a greetArgs) (string, error) {
			if a.Name == "nobody" {
				return "", &tools.Error{Name: "GreetError", Code: "NO_ONE", Message: "nobody to greet", Reason: "empty room"}
			}
			return strings.Repeat("hello "+a.Name+"\n", max(a.Times, 1)), nil
		}, tools.WithMeta(func(a greetArgs, _ string) any { return map[string]string{"who": a.Name} })))
}, core.WithInject(tools.Key.Name()))

const toolsManifest = `plugins:
  - id: tools
    name: tools
  - id: greet
    name: cli-test-greet
`

func runCLI(t *testing.T, manifest string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := &cli.Env{
		Stdout: &out, Stderr: &errOut, Stdin: strings.NewReader(""),
		DefaultManifest: []byte(manifest),
		Plugins:         []core.Plugin{tools.Plugin, greetPlugin},
		LookupEnv:       func(string) (string, bool) { return "", false },
		Getwd:           outsideRepo(t), // the embedded manifest, not the repository's harness.yml
		Ctx:             context.Background(),
	}
	code := cli.Run(args, env)
	return code, out.String(), errOut.String()
}

func TestToolsCommandListsSchemas(t *testing.T) {
	t.Parallel()
	code, out, stderr := runCLI(t, toolsManifest, "tools")
	if code != 0 || out != "NAME   DESCRIPTION\ngreet  Greet someone.\n" {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	code, out, _ = runCLI(t, toolsManifest, "tools", "--json")
	var got []map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 {
		t.Fatalf("exit %d: %v\n%s", code, err, out)
	}
	if len(got) != 1 || got[0]["name"] != "greet" || len(got[0]) != 3 {
		t.Errorf("%s", out)
	}
	params, _ := got[0]["parameters"].(map[string]any)
	if req, _ := params["required"].([]any); len(req) != 1 || req[0] != "name" {
		t.Errorf("parameters %v", params)
	}
}

func TestToolCommand(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args     []string
		wantCode int
		wantOut  string
	}{
		{[]string{"tool", "greet", `{"name":"ada","times":"2"}`}, 0, "hello ada\nhello ada\n"},
		{[]string{"tool", "greet", `{"name":"nobody"}`}, 1, "Error: nobody to greet\n"},
		{[]string{"tool", "greet", `{"nme":"ada"}`}, 1, "Error: invalid arguments: /name: required: missing required property \"name\"; /nme: additionalProperties: unknown key \"nme\" (allowed keys: name, times)\n"},
		{[]string{"tool", "nosuch"}, 1, "Error: unknown tool \"nosuch\"\n"},
		{[]string{"tool"}, 2, ""},
		{[]string{"tool", "a", "{}", "extra"}, 2, ""},
	}
	for _, tc := range cases {
		code, out, stderr := runCLI(t, toolsManifest, tc.args...)
		if code != tc.wantCode || out != tc.wantOut {
			t.Errorf("%q: exit %d out %q stderr %q", tc.args, code, out, stderr)
		}
	}
}

func TestToolCommandJSON(t *testing.T) {
	t.Parallel()
	code, out, _ := runCLI(t, toolsManifest, "tool", "greet", `{"name":"nobody"}`, "--json")
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 1 {
		t.Fatalf("exit %d %v: %s", code, err, out)
	}
	want := `{"content":[{"text":"Error: nobody to greet","type":"text"}],"error":{"code":"NO_ONE","name":"GreetError","reason":"empty room"},"isError":true}`
	if b, _ := json.Marshal(got); string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	code, out, _ = runCLI(t, toolsManifest, "tool", "greet", `{"name":"ada"}`, "--json")
	got = nil
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 {
		t.Fatalf("exit %d %v: %s", code, err, out)
	}
	want = `{"content":[{"text":"hello ada\n","type":"text"}],"isError":false,"meta":{"who":"ada"}}`
	if b, _ := json.Marshal(got); string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	// Model-facing text is printed as is: "<" is not escaped to \u003c.
	_, out, _ = runCLI(t, toolsManifest, "tool", "greet", `{"name":"<b>&"}`, "--json")
	if !strings.Contains(out, `"hello <b>&\n"`) {
		t.Errorf("HTML-escaped output: %s", out)
	}
}

func TestToolCommandWithoutRegistryIsAConfigurationError(t *testing.T) {
	t.Parallel()
	code, _, stderr := runCLI(t, "plugins: []\n", "tools")
	if code != 2 || !strings.Contains(stderr, `mount the "tools" plugin`) {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

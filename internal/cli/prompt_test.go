package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/plugins/instructions"
	prompttools "github.com/dshgo/harness/plugins/prompt-tools"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tokenmeter"
	"github.com/dshgo/harness/services/tools"
)

// echoTool is a test plugin registering one tool.
var echoTool = core.Define("test-echo-tool", func(c *core.Context, _ struct{}) error {
	type args struct {
		Text string `json:"text"`
	}
	return tools.Register(c, tools.Define("echo", "Echo the text back.",
		func(_ context.Context, _ *tools.Execution, a args) (string, error) { return a.Text, nil }))
}, core.WithInject(tools.Key.Name()))

// brokenPlugin fails to apply, like a model route without its API key.
var brokenPlugin = core.Define("test-broken", func(*core.Context, struct{}) error {
	return errors.New("no API key: set TEST_API_KEY")
})

// runPrompt runs `harness prompt` against a manifest text with the
// systemprompt, tools, prompt-tools, tokenmeter and a test tool plugin in
// the catalog.
func runPrompt(t *testing.T, manifestYAML string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "harness.yml")
	if err := os.WriteFile(path, []byte(manifestYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	env := &Env{
		Stdin:  strings.NewReader(""),
		Stdout: &out,
		Stderr: &errOut,
		Plugins: []core.Plugin{
			systemprompt.Plugin, tools.Plugin,
			prompttools.Plugin, tokenmeter.Plugin,
			echoTool, brokenPlugin, instructions.Plugin,
		},
		LookupEnv:   func(string) (string, bool) { return "", false },
		Ctx:         context.Background(),
		Interrupted: func() bool { return false },
	}
	code = Run(append([]string{"prompt", "--config", path}, args...), env)
	return code, out.String(), errOut.String()
}

const personaManifest = `plugins:
  - id: prompt
    name: systemprompt
    config:
      personaPrefix: "You are a careful engineer."
      personaSuffix: "Working directory: {{cwd}}"
`

func TestPromptPrintsTheRenderedPrompt(t *testing.T) {
	t.Parallel()
	code, out, errOut := runPrompt(t, personaManifest, "--var", "cwd=/srv/{{app}}")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := systemprompt.IdentityText + "\n\nYou are a careful engineer.\n\nWorking directory: /srv/{{app}}\n"
	if out != want {
		t.Fatalf("stdout = %q, want %q", out, want)
	}
}

func TestPromptJSON(t *testing.T) {
	t.Parallel()
	code, out, errOut := runPrompt(t, personaManifest, "--json", "--scope", "session-1", "--var", "cwd=/w")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := map[string]any{
		"sections": []any{
			map[string]any{"name": "harness:identity", "order": -1000.0, "text": systemprompt.IdentityText},
			map[string]any{"name": "deployment:persona-prefix", "order": 0.0, "text": "You are a careful engineer."},
			map[string]any{"name": "deployment:persona-suffix", "order": 10200.0, "text": "Working directory: /w"},
		},
		"tools": []any{},
	}
	gotJSON, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(want)
	if !bytes.Equal(gotJSON, wantJSON) {
		t.Fatalf("json = %s\nwant   %s", gotJSON, wantJSON)
	}
}

func TestPromptErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		manifest string
		args     []string
		code     int
		stderr   string
	}{
		{"unknown variable", personaManifest, nil, 1,
			`harness: unknown prompt variable "{{cwd}}" in section "deployment:persona-suffix"; registered variables: (none)`},
		{"malformed --var", personaManifest, []string{"--var", "cwd"}, 2, `--var "cwd": want name=value`},
		{"invalid variable name", personaManifest, []string{"--var", "Cwd=/x"}, 2,
			`--var: invalid prompt variable name "Cwd" (must match /^[a-z][a-z0-9_]*$/)`},
		{"not mounted", "plugins: []\n", nil, 2, "the systemprompt plugin is not mounted"},
		{"bad persona syntax", "plugins:\n  - name: systemprompt\n    config: {personaPrefix: \"{{ x }}\"}\n", nil, 2, "personaPrefix: malformed prompt variable reference"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runPrompt(t, tc.manifest, tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.stderr) {
				t.Fatalf("exit %d stderr %q; want exit %d containing %q", code, errOut, tc.code, tc.stderr)
			}
		})
	}
}

func TestPromptJSONWithToolsAndTokens(t *testing.T) {
	t.Parallel()
	manifest := personaManifest + `  - name: tools
  - name: prompt-tools
  - name: test-echo-tool
  - name: tokenmeter
    config: {estimator: bytes}
`
	code, out, errOut := runPrompt(t, manifest, "--json", "--var", "cwd=/w")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got promptJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	est := tokenmeter.Bytes{}
	if len(got.Sections) != 3 || got.Sections[1].Tokens == nil || *got.Sections[1].Tokens != est.Count("You are a careful engineer.") {
		t.Fatalf("sections = %s", out)
	}
	if len(got.Tools) != 1 || got.Tools[0].Name != "echo" || got.Tools[0].Tokens == nil || *got.Tools[0].Tokens <= 0 {
		t.Fatalf("tools = %s", out)
	}
	text := systemprompt.IdentityText + "\n\nYou are a careful engineer.\n\nWorking directory: /w"
	reg := tools.Define("echo", "Echo the text back.", func(context.Context, *tools.Execution, struct {
		Text string `json:"text"`
	}) (string, error) {
		return "", nil
	})
	want := tokenmeter.PriceSystem(est, text) + tokenmeter.PriceTools(est, []tokenmeter.ToolSchema{{Name: "echo", Description: "Echo the text back.", Parameters: reg.Parameters()}})
	if got.TotalTokens == nil || *got.TotalTokens != want {
		t.Fatalf("totalTokens = %v, want %d (%s)", got.TotalTokens, want, out)
	}
}

func TestPromptSurvivesRowsThatFail(t *testing.T) {
	t.Parallel()
	manifest := personaManifest + "  - id: model\n    name: test-broken\n"
	code, out, errOut := runPrompt(t, manifest, "--var", "cwd=/w")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.HasSuffix(out, "Working directory: /w\n") {
		t.Fatalf("stdout = %q", out)
	}
	want := `harness: warning: row "model" (test-broken) failed, its prompt contributions are missing: `
	if !strings.Contains(errOut, want) || !strings.Contains(errOut, "no API key: set TEST_API_KEY") {
		t.Fatalf("stderr = %q", errOut)
	}
}

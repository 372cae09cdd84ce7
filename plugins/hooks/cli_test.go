package hooks_test

import (
	"bytes"
	"context"
	"github.com/dshgo/harness/core"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/internal/cli"
	"github.com/dshgo/harness/internal/policytest"
	"github.com/dshgo/harness/plugins/approval"
	"github.com/dshgo/harness/plugins/hooks"
	"github.com/dshgo/harness/plugins/permission"
	toolbash "github.com/dshgo/harness/plugins/tool-bash"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/tools"
)

// TestB17ThroughHarnessTool runs case B17 end to end through `harness tool`:
// the manifest of the case, the real tool-bash, one CLI invocation per call.
func TestB17ThroughHarnessTool(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "b17-target")
	keep := filepath.Join(target, "keep")
	if err := os.MkdirAll(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keep, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	manifest := `plugins:
  - {id: subprocess, name: subprocess-local}
  - {id: tools, name: tools}
  - {id: bash, name: tool-bash, config: {cwd: "` + dir + `"}}
  - {id: approval, name: approval, config: {answerer: headless}}
  - id: permission
    name: permission
    config: {cwd: "` + dir + `", allow: ["bash(echo *)"], deny: ["bash(rm -rf *)"]}
  - id: hooks
    name: hooks
    config:
      cwd: "` + dir + `"
      hooks:
        PreToolUse:
          - hooks: [{type: command, command: "` + examples(t, "allow-all.sh") + `"}]
          - hooks: [{type: command, command: "` + examples(t, "deny-rm-rf.sh") + `"}]
          - hooks: [{type: command, command: "` + examples(t, "audit.sh") + `"}]
        PostToolUse:
          - hooks: [{type: command, command: "` + examples(t, "redact-secrets.sh") + `"}]
`
	harnessTool := func(command string) (int, string) {
		var out, errOut bytes.Buffer
		env := &cli.Env{
			Stdout: &out, Stderr: &errOut, Stdin: strings.NewReader(""),
			DefaultManifest: []byte(manifest),
			Plugins: []core.Plugin{
				subprocess.Plugin, tools.Plugin, toolbash.Plugin,
				approval.Plugin, permission.Plugin, hooks.Plugin,
			},
			LookupEnv: func(string) (string, bool) { return "", false },
			Getwd:     func() (string, error) { return dir, nil },
			Ctx:       context.Background(),
		}
		code := cli.Run([]string{"tool", "bash", `{"command":` + policytest.Quote(command) + `,"description":"b17"}`}, env)
		if errOut.Len() > 0 && code != 1 {
			t.Logf("stderr: %s", errOut.String())
		}
		return code, out.String()
	}

	if code, out := harnessTool("echo ok"); code != 0 || out != "ok\n" {
		t.Errorf("echo ok: exit %d, %q", code, out)
	}
	for i := 0; i < 2; i++ { // the call, then its retry
		code, out := harnessTool("rm -rf " + target)
		if code != 1 || !strings.HasPrefix(out, "Error: ") || !strings.Contains(out, "rm -rf") {
			t.Errorf("rm (attempt %d): exit %d, %q", i+1, code, out)
		}
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("%s is gone: %v", keep, err)
	}
	if code, out := harnessTool("echo sk-b17-secret"); code != 0 || out != "[REDACTED]\n" {
		t.Errorf("redaction: exit %d, %q", code, out)
	}
	audit, _ := os.ReadFile(filepath.Join(dir, ".harness-audit.log"))
	if string(audit) != strings.Repeat("PreToolUse Bash\n", 4) {
		t.Errorf("audit log: %q", audit)
	}
}

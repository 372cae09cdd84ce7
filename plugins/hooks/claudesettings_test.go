package hooks_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/internal/cli"
	"github.com/dshgo/harness/internal/policytest"
	"github.com/dshgo/harness/plugins/approval"
	"github.com/dshgo/harness/plugins/hooks"
	"github.com/dshgo/harness/plugins/permission"
	toolbash "github.com/dshgo/harness/plugins/tool-bash"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/tools"
)

// claudeProject writes a repository set up for Claude Code: project and
// local settings with hooks and permission rules, plus user settings in a
// fake home, and returns the project and home directories.
func claudeProject(t *testing.T, project, local, user string) (dir, home string) {
	t.Helper()
	dir, home = t.TempDir(), t.TempDir()
	for path, body := range map[string]string{
		filepath.Join(dir, ".claude", "settings.json"):       project,
		filepath.Join(dir, ".claude", "settings.local.json"): local,
		filepath.Join(home, ".claude", "settings.json"):      user,
	} {
		if body == "" {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir, home
}

// harnessIn runs the harness CLI in dir with HOME=home and the policy
// plugins of the default manifest's shape (no hooks configured in it).
func harnessIn(t *testing.T, dir, home string, extraEnv map[string]string, args ...string) (int, string, string) {
	t.Helper()
	manifest := `plugins:
  - {id: subprocess, name: subprocess-local}
  - {id: tools, name: tools}
  - {id: bash, name: tool-bash, config: {cwd: "` + dir + `"}}
  - {id: approval, name: approval, config: {answerer: headless}}
  - id: permission
    name: permission
    config: {cwd: "` + dir + `", allow: ["bash(echo *)"], deny: ["read(**/.env)"]}
  - id: hooks
    name: hooks
    config: {cwd: "` + dir + `", hooks: {}}
`
	var out, errOut bytes.Buffer
	env := &cli.Env{
		Stdout: &out, Stderr: &errOut, Stdin: strings.NewReader(""),
		DefaultManifest: []byte(manifest),
		Plugins: []core.Plugin{
			subprocess.Plugin, tools.Plugin, toolbash.Plugin,
			approval.Plugin, permission.Plugin, hooks.Plugin,
		},
		LookupEnv: func(k string) (string, bool) {
			if k == "HOME" {
				return home, true
			}
			v, ok := extraEnv[k]
			return v, ok
		},
		Getwd: func() (string, error) { return dir, nil },
		Ctx:   context.Background(),
	}
	code := cli.Run(args, env)
	return code, out.String(), errOut.String()
}

func bashArgs(command string) string {
	return `{"command":` + policytest.Quote(command) + `,"description":"t"}`
}

// A repository set up for Claude Code works unchanged (issue 24): the hooks
// of every settings file run (a Bash validator from the project file that
// checks tool_name == "Bash", one from the user file), the permission rules
// of every file apply on top of harness.yml's, `harness config` shows the
// layer with its source files, `harness check` names them, unknown keys are
// ignored, --no-claude-settings turns the layer off, and malformed JSON is
// an error at FILE:LINE:COL.
func TestClaudeSettingsLayer(t *testing.T) {
	t.Parallel()
	validator := `#!/usr/bin/env bash
input=$(cat)
case "$input" in
  *'"tool_name":"Bash"'*'sudo '*) echo "sudo is not allowed" >&2; exit 2 ;;
esac
exit 0
`
	userHook := `#!/usr/bin/env bash
input=$(cat)
case "$input" in
  *'"tool_name":"Bash"'*'curl '*) echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no network from the user settings"}}' ;;
esac
`
	tmp := t.TempDir()
	vpath := filepath.Join(tmp, "validate-bash.sh")
	upath := filepath.Join(tmp, "user-hook.sh")
	for p, b := range map[string]string{vpath: validator, upath: userHook} {
		if err := os.WriteFile(p, []byte(b), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	project := `{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "opus",
  "permissions": {"allow": ["Bash(ls *)"], "deny": ["Bash(git push *)"]},
  "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "` + vpath + `"}]}]}
}`
	local := `{"permissions": {"ask": ["Bash(echo secret*)"]}, "statusLine": {"type": "command", "command": "x"}}`
	user := `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "` + upath + `"}]}]}}`
	dir, home := claudeProject(t, project, local, user)

	for _, tc := range []struct{ command, want string }{
		{"echo hi", "hi\n"},
		{"ls " + dir + " >/dev/null && echo listed", "listed\n"}, // ls allowed by the project's Bash(ls *), echo by harness.yml
		{"sudo echo x", "Error: sudo is not allowed"},            // the project hook
		{"curl http://127.0.0.1:9", "Error: no network from the user settings"},
		{"git push origin main", "Error: permission denied: rule \"Bash(git push *)\" in the deny list"},                // the project's deny rule
		{"echo secret-value", "Error: tool \"bash\" requires approval: rule \"Bash(echo secret*)\" is in the ask list"}, // the local file's ask rule, headless
	} {
		code, out, stderr := harnessIn(t, dir, home, nil, "tool", "bash", bashArgs(tc.command))
		if !strings.HasPrefix(out, tc.want) || strings.HasPrefix(tc.want, "Error: ") != (code == 1) {
			t.Errorf("%s: exit %d, %q (stderr %s), want %q", tc.command, code, out, stderr, tc.want)
		}
	}
	// harness config shows the layer and where it came from.
	code, out, stderr := harnessIn(t, dir, home, nil, "config")
	if code != 0 || !strings.Contains(out, "claude settings (") || !strings.Contains(out, filepath.Join(dir, ".claude", "settings.json")) ||
		!strings.Contains(out, "Bash(git push *)") || !strings.Contains(out, vpath) {
		t.Errorf("harness config: exit %d\n%s\n%s", code, out, stderr)
	}
	// harness check names the files used.
	code, out, stderr = harnessIn(t, dir, home, nil, "check")
	wantFiles := strings.Join([]string{filepath.Join(home, ".claude", "settings.json"), filepath.Join(dir, ".claude", "settings.json"), filepath.Join(dir, ".claude", "settings.local.json")}, ", ")
	if code != 0 || !strings.Contains(out, "claude settings: "+wantFiles+"\n") {
		t.Errorf("harness check: exit %d\n%s\n%s", code, out, stderr)
	}
	// One switch turns the layer off: the hook no longer runs.
	for _, off := range []struct {
		env  map[string]string
		args []string
	}{
		{nil, []string{"--no-claude-settings", "tool", "bash", bashArgs("sudo echo x")}},
		{map[string]string{"HARNESS_CLAUDE_SETTINGS": "0"}, []string{"tool", "bash", bashArgs("sudo echo x")}},
	} {
		if _, out, _ := harnessIn(t, dir, home, off.env, off.args...); strings.Contains(out, "sudo is not allowed") {
			t.Errorf("%v %v: the layer is still on: %q", off.env, off.args, out)
		}
	}
	// Malformed JSON: FILE:LINE:COL.
	bad := filepath.Join(dir, ".claude", "settings.local.json")
	if err := os.WriteFile(bad, []byte("{\n  \"permissions\": {\"allow\": [\"x\",]}\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = harnessIn(t, dir, home, nil, "check")
	if code != 2 || !strings.Contains(stderr, bad+":2:") || !strings.Contains(stderr, "invalid JSON") {
		t.Errorf("malformed settings: exit %d, %s", code, stderr)
	}
}

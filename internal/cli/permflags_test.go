package cli_test

import (
	"strings"
	"testing"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// --permission-mode and --allowed-tools patch the permission row for one
// run: an echo the headless approver would refuse runs once a flag allows
// it; bad values and a manifest without a permission row are usage errors.
func TestPermissionModeAndAllowedToolsFlags(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	const rows = "  - name: approval\n    config: {answerer: headless}\n  - name: permission\n"
	echo := func(t *testing.T, args ...string) (string, runOut) {
		t.Helper()
		srv := llmtest.New(t, []llmtest.Turn{
			toolCall("c1", "bash", `{"command":"echo perm-flag-marker","description":"say it"}`),
			text("done"),
		})
		r := runAgent(t, repo, agentManifest(srv.URL, t.TempDir(), rows), "", append([]string{"run"}, append(args, "go")...)...)
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		for _, req := range srv.Requests() {
			w, _ := req.Wire()
			for _, m := range w.Messages {
				if m.Role == "tool" && m.ToolCallID == "c1" {
					return m.Text(), r
				}
			}
		}
		t.Fatalf("no tool result; stderr %s", r.stderr)
		return "", r
	}
	ran := func(s string) bool { return strings.HasPrefix(s, "perm-flag-marker") }
	if got, _ := echo(t); ran(got) {
		t.Fatalf("without flags the headless approver should refuse the call: %q", got)
	}
	for _, args := range [][]string{
		{"--allowed-tools", "Bash(echo *) Read"},
		{"--allowed-tools", "read,bash(echo perm-flag-marker)"},
		{"--allowed-tools", "Read", "--allowed-tools", "Bash"},
		{"--permission-mode", "bypass"},
		{"--permission-mode", "bypassPermissions"},
	} {
		if got, r := echo(t, args...); !ran(got) {
			t.Errorf("%q: tool result %q; stderr %s", args, got, r.stderr)
		}
	}
	if got, _ := echo(t, "--permission-mode", "plan", "--allowed-tools", "Read"); ran(got) {
		t.Errorf("plan mode ran bash: %q", got)
	}
	for _, tc := range []struct {
		args        []string
		extra, want string
	}{
		{[]string{"--permission-mode", "yolo"}, rows, `--permission-mode "yolo": not a mode (default, acceptEdits, plan, bypass, dontAsk)`},
		{[]string{"--allowed-tools", "Bash(echo"}, rows, `--allowed-tools: rule "Bash(echo": missing closing parenthesis`},
		{[]string{"--allowed-tools", " , "}, rows, "--allowed-tools: no rule given"},
		{[]string{"--permission-mode", "plan"}, "", "need a `name: permission` row"},
	} {
		r := runAgent(t, repo, agentManifest("http://127.0.0.1:1", t.TempDir(), tc.extra), "", append([]string{"run"}, append(tc.args, "go")...)...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q, want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

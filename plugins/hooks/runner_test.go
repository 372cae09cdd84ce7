package hooks

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/dshgo/harness/services/subprocess"
)

// TestExampleScriptsThroughTheRunner runs every script under examples/hooks
// through the real subprocess runner and decodes its answer.
func TestExampleScriptsThroughTheRunner(t *testing.T) {
	t.Parallel()
	rt, err := subprocess.New(subprocess.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close(context.Background()) })
	run := subprocessRunner(rt)
	dir := t.TempDir()
	tests := []struct {
		script, event, payload string
		verdict                verdict
		reason, replace, ctx   string
	}{
		{"allow-all.sh", EventPreToolUse, `{"tool_name":"bash"}`, verdictAllow, "", "", ""},
		{"deny-rm-rf.sh", EventPreToolUse, `{"tool_input":{"command":"ls && rm -fr build"}}`, verdictDeny,
			"rm -rf is not allowed by policy; delete files one by one or ask the user", "", ""},
		{"deny-rm-rf.sh", EventPreToolUse, `{"tool_input":{"command":"rm -r build"}}`, verdictNone, "", "", ""},
		{"protect-env.sh", EventPreToolUse, `{"tool_input":{"file_path":"config/.env"}}`, verdictDeny,
			"refusing to modify config/.env: environment files hold secrets", "", ""},
		{"protect-env.sh", EventPreToolUse, `{"tool_input":{"file_path":"main.go"}}`, verdictNone, "", "", ""},
		{"ask-git-push.sh", EventPreToolUse, `{"tool_input":{"command":"git push --tags"}}`, verdictAsk, "pushing publishes commits", "", ""},
		{"redact-secrets.sh", EventPostToolUse, `{"tool_response":{"content":"key=sk-abc-123 \"quoted\"\n","isError":false}}`, verdictNone,
			"", "key=[REDACTED] \"quoted\"\n", ""},
		{"redact-secrets.sh", EventPostToolUse, `{"tool_response":{"content":"nothing secret","isError":false}}`, verdictNone, "", "", ""},
		{"session-context.sh", EventSessionStart, `{"source":"startup"}`, verdictNone, "", "", "current git branch: none"},
	}
	for _, tt := range tests {
		path, _ := filepath.Abs(filepath.Join("..", "..", "examples", "hooks", tt.script))
		env := map[string]string{"CLAUDE_PROJECT_DIR": dir}
		r := run(context.Background(), path, []byte(tt.payload+"\n"), dir, env, 10*time.Second)
		o := decode(tt.event, tt.script, "10s", r)
		got := ""
		if o.replace != nil {
			got = *o.replace
		}
		if o.failed || o.verdict != tt.verdict || o.reason != tt.reason || got != tt.replace || o.context != tt.ctx {
			t.Errorf("%s %s: %+v (replace %q), stderr %q", tt.script, tt.payload, o, got, r.stderr)
		}
	}
}

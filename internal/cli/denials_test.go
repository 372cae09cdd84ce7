package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// -o json lists the calls a permission decision refused (permissionDenials,
// as Claude Code: tool name, tool use id, input); --strict then exits 3.
func TestPermissionDenialsInJSONAndStrict(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	const rows = "  - name: approval\n    config: {answerer: headless}\n  - name: permission\n    config:\n      allow: [\"bash(echo *)\"]\n      deny: [\"bash(rm *)\"]\n"
	turns := func() []llmtest.Turn {
		return []llmtest.Turn{
			llmtest.Calls(
				llmtest.Call{ID: "ok1", Name: "bash", Args: `{"command":"echo fine","description":"say"}`},
				llmtest.Call{ID: "no1", Name: "bash", Args: `{"command":"rm a.txt","description":"remove"}`},
			),
			text("done"),
		}
	}
	type denial struct {
		ToolName  string          `json:"tool_name"`
		ToolUseID string          `json:"tool_use_id"`
		ToolInput json.RawMessage `json:"tool_input"`
	}
	decode := func(t *testing.T, out string) []denial {
		t.Helper()
		var res struct {
			Result            string    `json:"result"`
			PermissionDenials *[]denial `json:"permissionDenials"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || res.PermissionDenials == nil || res.Result != "done" {
			t.Fatalf("json result %q: %v", out, err)
		}
		return *res.PermissionDenials
	}
	for _, strict := range []bool{false, true} {
		args := []string{"run", "-o", "json", "clean up"}
		if strict {
			args = append(args, "--strict")
		}
		r := runAgent(t, repo, agentManifest(llmtest.New(t, turns()).URL, t.TempDir(), rows), "", args...)
		want := 0
		if strict {
			want = 3
		}
		if r.code != want {
			t.Fatalf("strict %v: exit %d, want %d; stderr %s", strict, r.code, want, r.stderr)
		}
		d := decode(t, r.stdout)
		if len(d) != 1 || d[0].ToolName != "bash" || d[0].ToolUseID != "no1" {
			t.Fatalf("denials %+v", d)
		}
		var in struct{ Command string }
		if err := json.Unmarshal(d[0].ToolInput, &in); err != nil || in.Command != "rm a.txt" {
			t.Fatalf("tool_input %s: %v", d[0].ToolInput, err)
		}
		if strict && !strings.Contains(r.stderr, "--strict: 1 tool call denied") {
			t.Fatalf("stderr %q", r.stderr)
		}
	}
	// Nothing refused: an empty list, and --strict exits 0.
	srv := llmtest.New(t, []llmtest.Turn{toolCall("c1", "bash", `{"command":"echo fine","description":"say"}`), text("done")})
	r := runAgent(t, repo, agentManifest(srv.URL, t.TempDir(), rows), "", "run", "-o", "json", "--strict", "say")
	if r.code != 0 || len(decode(t, r.stdout)) != 0 {
		t.Fatalf("exit %d, stdout %s, stderr %s", r.code, r.stdout, r.stderr)
	}
}

//go:build unix

package hooks_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/dshgo/harness/plugins/hooks"
)

// TestPreToolUseDecisionPaths runs one real bash hook per protocol path and
// checks the exact result of a bash call through the registry.
func TestPreToolUseDecisionPaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		body    string
		timeout float64
		want    string // the call's content
		isError bool
	}{
		{name: "exit 0 silent allows", body: "cat >/dev/null\nexit 0\n", want: "ran\n"},
		{name: "exit 0 plain text allows", body: "cat >/dev/null\necho looks fine\n", want: "ran\n"},
		{name: "exit 2 blocks with stderr", body: "cat >/dev/null\necho 'not on fridays' >&2\nexit 2\n", want: "Error: not on fridays", isError: true},
		{name: "exit 1 is a non-blocking error", body: "cat >/dev/null\necho oops >&2\nexit 1\n", want: "ran\n"},
		{name: "JSON permissionDecision deny", body: `cat >/dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"use the staging host"}}'
`, want: "Error: use the staging host", isError: true},
		{name: "JSON top-level decision deny", body: "cat >/dev/null\necho '{\"decision\":\"deny\",\"reason\":\"nope\"}'\n", want: "Error: nope", isError: true},
		{name: "JSON legacy block", body: "cat >/dev/null\necho '{\"decision\":\"block\",\"reason\":\"blocked\"}'\n", want: "Error: blocked", isError: true},
		{name: "JSON allow", body: "cat >/dev/null\necho '{\"hookSpecificOutput\":{\"permissionDecision\":\"allow\"}}'\n", want: "ran\n"},
		{name: "continue false stops the call", body: "cat >/dev/null\necho '{\"continue\":false,\"stopReason\":\"halt\"}'\n", want: "Error: halt", isError: true},
		{name: "invalid JSON fails closed", body: "cat >/dev/null\necho '{\"decision\": '\n",
			want: `Error: hook "H" printed invalid JSON: unexpected end of JSON input; failing closed`, isError: true},
		{name: "killed by a signal fails closed", body: "cat >/dev/null\nkill -KILL $$\n",
			want: `Error: hook "H" was killed by signal SIGKILL; failing closed`, isError: true},
		{name: "timeout fails closed", body: "sleep 1000\n", timeout: 0.5,
			want: `Error: hook "H" timed out after 0.5s; failing closed`, isError: true},
		{name: "reads no stdin", body: "exit 0\n", want: "ran\n"},
		{name: "closes stdout early then answers nothing", body: "exec 1>&-\ncat >/dev/null\nexit 0\n", want: "ran\n"},
		{name: "answers then closes stdout early", body: `echo '{"decision":"deny","reason":"early"}'
exec 1>&-
cat >/dev/null
sleep 0.1
`, want: "Error: early", isError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cmd := script(t, dir, "hook.sh", tt.body)
			cfg := hooksConfig(dir, []hooks.MatcherGroup{{Matcher: "bash", Hooks: []hooks.CommandHook{{Command: cmd, Timeout: tt.timeout, Name: "H"}}}}, nil)
			reg := harness(t, mount{Plugin: hooks.Plugin, Config: cfg}, headless)
			o := run(t, reg, "c1", "echo ran")
			if text(o) != tt.want || o.IsError != tt.isError {
				t.Fatalf("content %q isError %v, want %q %v", text(o), o.IsError, tt.want, tt.isError)
			}
		})
	}
}

// TestPreToolUseAskHeadlessIsAClearDenial: a hook's ask with nobody to answer.
func TestPreToolUseAskHeadlessIsAClearDenial(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := hooksConfig(dir, []hooks.MatcherGroup{group("Bash", examples(t, "ask-git-push.sh"))}, nil)
	reg := harness(t, mount{Plugin: hooks.Plugin, Config: cfg}, headless)
	o := run(t, reg, "c1", "git push origin main")
	want := `Error: pushing publishes commits; approval is required, but this session is headless: there is no terminal to ask on. ` +
		`The tool "bash" was not run; to let such calls run, change the PreToolUse hook that asks, or allow them in the permission rules of harness.yml.`
	if text(o) != want || !o.IsError {
		t.Fatalf("content %q", text(o))
	}
	if o := run(t, reg, "c2", "echo fine"); text(o) != "fine\n" {
		t.Fatalf("unrelated call: %q", text(o))
	}
}

// TestHookPayload checks the event JSON a hook reads on stdin.
func TestHookPayload(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pre := script(t, dir, "pre.sh", "cat > \"$CLAUDE_PROJECT_DIR/pre.json\"\n")
	post := script(t, dir, "post.sh", "cat > \"$HARNESS_PROJECT_DIR/post.json\"\n")
	cfg := hooksConfig(dir, []hooks.MatcherGroup{group("", pre)}, []hooks.MatcherGroup{group("*", post)})
	cfg.SessionID = "s-1"
	reg := harness(t, mount{Plugin: hooks.Plugin, Config: cfg}, headless)
	if o := run(t, reg, "call-7", "echo '<&>'"); text(o) != "<&>\n" {
		t.Fatalf("content %q", text(o))
	}
	var got map[string]any
	raw, err := os.ReadFile(filepath.Join(dir, "pre.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(raw), "}\n") || strings.Count(string(raw), "\n") != 1 {
		t.Errorf("payload must be one line of JSON and a newline: %q", raw)
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	// transcript_path is always a readable file (outside a session, an
	// empty transcript in a private directory); tool_name is Claude Code's.
	tp, _ := got["transcript_path"].(string)
	if st, err := os.Stat(tp); err != nil || !st.Mode().IsRegular() {
		t.Errorf("transcript_path %q: %v", tp, err)
	}
	want := map[string]any{
		"session_id": "s-1", "transcript_path": tp, "cwd": dir, "hook_event_name": "PreToolUse", "permission_mode": "default",
		"tool_name": "Bash", "tool_input": map[string]any{"command": "echo '<&>'"}, "tool_use_id": "call-7",
	}
	if g, w := mustJSON(got), mustJSON(want); g != w {
		t.Errorf("pre payload\n got %s\nwant %s", g, w)
	}
	raw, err = os.ReadFile(filepath.Join(dir, "post.json"))
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want["hook_event_name"] = "PostToolUse"
	want["tool_response"] = map[string]any{"content": "<&>\n", "isError": false, "value": map[string]any{"stdout": "<&>\n", "exitCode": 0.0}}
	if g, w := mustJSON(got), mustJSON(want); g != w {
		t.Errorf("post payload\n got %s\nwant %s", g, w)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestMatcherSelectsHooks: a group matching another tool does not run.
func TestMatcherSelectsHooks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	deny := script(t, dir, "deny.sh", "cat >/dev/null\nexit 2\n")
	cfg := hooksConfig(dir, []hooks.MatcherGroup{group("read|write", deny), group("^grep$", deny)}, nil)
	reg := harness(t, mount{Plugin: hooks.Plugin, Config: cfg}, headless)
	if o := run(t, reg, "c1", "echo ok"); text(o) != "ok\n" {
		t.Fatalf("content %q", text(o))
	}
}

// TestHooksRunInParallel: two hooks that each wait for the other to start.
// Run one after the other, the first would time out.
func TestHooksRunInParallel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rendezvous := func(me, other string) string {
		return "cat >/dev/null\ntouch \"$CLAUDE_PROJECT_DIR/" + me + "\"\n" +
			"for i in $(seq 1 200); do [ -e \"$CLAUDE_PROJECT_DIR/" + other + "\" ] && exit 0; sleep 0.05; done\nexit 2\n"
	}
	a := script(t, dir, "a.sh", rendezvous("a", "b"))
	b := script(t, dir, "b.sh", rendezvous("b", "a"))
	cfg := hooksConfig(dir, []hooks.MatcherGroup{group("bash", a, b)}, nil)
	reg := harness(t, mount{Plugin: hooks.Plugin, Config: cfg}, headless)
	if o := run(t, reg, "c1", "echo ok"); text(o) != "ok\n" {
		t.Fatalf("content %q", text(o))
	}
}

// TestTimeoutKillsTheWholeRange: a hook that sleeps forever and leaves a
// background child is killed at its timeout, with nothing left running.
func TestTimeoutKillsTheWholeRange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	body := "sleep 1000 &\necho $! >> \"" + pids + "\"\necho $$ >> \"" + pids + "\"\ntrap '' TERM\nwhile :; do sleep 1; done\n"
	cmd := script(t, dir, "forever.sh", body)
	cfg := hooksConfig(dir, []hooks.MatcherGroup{{Hooks: []hooks.CommandHook{{Command: cmd, Timeout: 0.5, Name: "forever"}}}}, nil)
	reg := harness(t, mount{Plugin: hooks.Plugin, Config: cfg}, headless)
	o := run(t, reg, "c1", "echo never")
	if want := `Error: hook "forever" timed out after 0.5s; failing closed`; text(o) != want {
		t.Fatalf("content %q, want %q", text(o), want)
	}
	raw, err := os.ReadFile(pids)
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(raw))
	if len(fields) != 2 {
		t.Fatalf("pids %q", raw)
	}
	for _, f := range fields {
		pid, _ := strconv.Atoi(f)
		if alive(pid) {
			t.Errorf("pid %d is still running after the hook's timeout", pid)
		}
	}
}

// alive reports whether pid runs (a zombie awaiting its reaper does not).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

// TestHookReadsNoStdinWithALargePayload: the payload exceeds a pipe buffer
// and the hook never reads it.
func TestHookReadsNoStdinWithALargePayload(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := script(t, dir, "deaf.sh", "echo '{\"decision\":\"deny\",\"reason\":\"deaf but decisive\"}'\n")
	cfg := hooksConfig(dir, []hooks.MatcherGroup{group("bash", cmd)}, nil)
	reg := harness(t, mount{Plugin: hooks.Plugin, Config: cfg}, headless)
	o := run(t, reg, "c1", "echo "+strings.Repeat("x", 1<<20))
	if text(o) != "Error: deaf but decisive" {
		t.Fatalf("content %.80q", text(o))
	}
}

// TestPostToolUsePaths: replacement, block, context, and failures that leave
// the result standing.
func TestPostToolUsePaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		body     string
		want     string
		isError  bool
		contexts []string
	}{
		{name: "replacement", body: `cat >/dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":"replaced"}}'`, want: "replaced"},
		{name: "block with reason", body: `cat >/dev/null
echo '{"decision":"block","reason":"output withheld"}'`, want: "output withheld", isError: true},
		{name: "exit 2 blocks", body: "cat >/dev/null\necho 'lint failed' >&2\nexit 2", want: "lint failed", isError: true},
		{name: "additional context", body: `cat >/dev/null
echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"remember to run the tests"}}'`,
			want: "secret sk-abc\n", contexts: []string{"remember to run the tests"}},
		{name: "invalid JSON is logged, result stands", body: "cat >/dev/null\necho '{oops'", want: "secret sk-abc\n"},
		{name: "timeout is logged, result stands", body: "sleep 1000", want: "secret sk-abc\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			cmd := script(t, dir, "post.sh", tt.body+"\n")
			cfg := hooksConfig(dir, nil, []hooks.MatcherGroup{{Matcher: "bash", Hooks: []hooks.CommandHook{{Command: cmd, Timeout: 0.5}}}})
			reg := harness(t, mount{Plugin: hooks.Plugin, Config: cfg}, headless)
			o := run(t, reg, "c1", "echo secret sk-abc")
			if text(o) != tt.want || o.IsError != tt.isError || strings.Join(o.AdditionalContexts, "|") != strings.Join(tt.contexts, "|") {
				t.Fatalf("content %q isError %v contexts %q", text(o), o.IsError, o.AdditionalContexts)
			}
		})
	}
}

// TestPreToolUseOrderDoesNotMatter: allow, deny and an audit hook in every
// order: deny wins and the audit hook runs.
func TestPreToolUseOrderDoesNotMatter(t *testing.T) {
	t.Parallel()
	orders := [][]string{{"allow-all.sh", "deny-rm-rf.sh", "audit.sh"}, {"deny-rm-rf.sh", "audit.sh", "allow-all.sh"}, {"audit.sh", "allow-all.sh", "deny-rm-rf.sh"}}
	for _, order := range orders {
		dir := t.TempDir()
		var groups []hooks.MatcherGroup
		for _, name := range order {
			groups = append(groups, group("bash", examples(t, name)))
		}
		reg := harness(t, mount{Plugin: hooks.Plugin, Config: hooksConfig(dir, groups, nil)}, headless)
		o := run(t, reg, "c1", "rm -rf "+dir+"/nothing")
		if !o.IsError || !strings.Contains(text(o), "rm -rf is not allowed by policy") {
			t.Errorf("order %v: %q", order, text(o))
		}
		log, _ := os.ReadFile(filepath.Join(dir, ".harness-audit.log"))
		if string(log) != "PreToolUse Bash\n" {
			t.Errorf("order %v: audit log %q", order, log)
		}
	}
}

// TestToolNamesForClaudeScripts: a script testing Claude Code's tool name
// works by default; harnessToolNames opts out; toolNames renames on top.
func TestToolNamesForClaudeScripts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := script(t, dir, "claude.sh", `input=$(cat)
case "$input" in
  *'"tool_name":"Bash"'*) echo "Bash is blocked by this Claude Code script" >&2; exit 2 ;;
esac
`)
	cfg := hooksConfig(dir, []hooks.MatcherGroup{group("Bash", cmd)}, nil)
	reg := harness(t, mount{Plugin: hooks.Plugin, Config: cfg}, headless)
	if o := run(t, reg, "c1", "echo ok"); text(o) != "Error: Bash is blocked by this Claude Code script" {
		t.Fatalf("by default the script sees Bash: %q", text(o))
	}
	cfg.HarnessToolNames = true
	reg = harness(t, mount{Plugin: hooks.Plugin, Config: cfg}, headless)
	if o := run(t, reg, "c1", "echo ok"); text(o) != "ok\n" {
		t.Fatalf("with harnessToolNames the script sees bash: %q", text(o))
	}
	cfg.ToolNames = map[string]string{"bash": "Bash"}
	reg = harness(t, mount{Plugin: hooks.Plugin, Config: cfg}, headless)
	if o := run(t, reg, "c1", "echo ok"); text(o) != "Error: Bash is blocked by this Claude Code script" {
		t.Fatalf("with toolNames: %q", text(o))
	}
}

package e2e

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// claudePayloadSettings hooks every event a Claude Code user logs, with a
// bash + jq recorder, and a python reminder on PostToolUse.
const claudePayloadSettings = `{
  "hooks": {
    "SessionStart": [{"hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/record.sh"}]}],
    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/record.sh"}]}],
    "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/record.sh"}]}],
    "PostToolUse": [
      {"matcher": "*", "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/record.sh"}]},
      {"matcher": "Bash|Edit|Write", "hooks": [{"type": "command", "command": "python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/reminder.py"}]}
    ],
    "Stop": [{"hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/record.sh"}]}],
    "SessionEnd": [{"hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/record.sh"}]}]
  }
}
`

// TestClaudeHookPayloadsAreClaudeShaped: a session of the real binary on
// the default manifest, with a project's .claude/settings.json hooking
// every event, sends each hook the payload Claude Code sends: the goldens
// in testdata/claude-payloads (one per event, and per tool for the tool
// events) hold them with the workspace, the home, the session id and the
// transcript path replaced by placeholders. A python reminder reading
// Claude's tool_response (Bash stdout, Edit/Write structuredPatch) reaches
// the model.
func TestClaudeHookPayloadsAreClaudeShaped(t *testing.T) {
	needTools(t, "bwrap", "jq", "python3", "rg")
	p := newProject(t, map[string]string{"notes.txt": "alpha\nbeta\n"})
	installPayloadHooks(t, p)
	o := p.run("work on the notes",
		bash("b1", "echo ok; echo 'FAIL: TestX' >&2; echo 'FAIL: TestX'", "run the tests"),
		call("w1", "write", map[string]any{"file_path": "new.txt", "content": "one\ntwo\n"}),
		read("r1", "notes.txt"),
		edit("e1", "notes.txt", "beta", "gamma"),
		call("g1", "grep", map[string]any{"pattern": "gamma", "path": "notes.txt"}),
		call("l1", "glob", map[string]any{"pattern": "*.txt"}),
		answer("Done."),
	)
	o.mustSucceed(t, "Done.")
	for _, want := range []string{
		"Reminder: a test failed; fix it before moving on.", // Bash stdout
		"Reminder: Edit changed notes.txt (+1 -1).",         // Edit structuredPatch
		"Reminder: Write changed new.txt (+0 -0).",          // Write (a new file: no patch)
	} {
		if !o.modelSaw(t, want) {
			t.Errorf("the model never got the reminder %q (the python hook reads Claude's tool_response)\nstderr: %s", want, o.stderr)
		}
	}
	got := payloads(t, p)
	want := []string{"PostToolUse-Bash.json", "PostToolUse-Edit.json", "PostToolUse-Glob.json", "PostToolUse-Grep.json", "PostToolUse-Read.json", "PostToolUse-Write.json",
		"PreToolUse-Bash.json", "PreToolUse-Edit.json", "PreToolUse-Glob.json", "PreToolUse-Grep.json", "PreToolUse-Read.json", "PreToolUse-Write.json",
		"SessionEnd.json", "SessionStart.json", "Stop.json", "UserPromptSubmit.json"}
	var names []string
	for n := range got {
		names = append(names, n)
	}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Errorf("payloads recorded: %q, want %q", names, want)
	}
	for _, n := range names {
		golden := filepath.Join("testdata", "claude-payloads", n)
		if *update {
			if err := os.WriteFile(golden, got[n], 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		w, err := os.ReadFile(golden)
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		if !bytes.Equal(got[n], w) {
			t.Errorf("%s differs from its golden (go test ./e2e -run %s -update rewrites it)\n got: %s\nwant: %s", n, t.Name(), got[n], w)
		}
	}
}

// TestClaudeHookPayloadsOfHarnessTool: `harness tool` (no session) sends
// hooks a session_id and a transcript_path naming a file too, and the
// Bash tool_response in Claude's shape.
func TestClaudeHookPayloadsOfHarnessTool(t *testing.T) {
	needTools(t, "bwrap", "jq", "python3")
	p := newProject(t, map[string]string{"main.go": "package main\n"})
	installPayloadHooks(t, p)
	if out := p.tool(t, "bash", map[string]any{"command": "echo out; echo err >&2"}); !strings.Contains(out, "out") {
		t.Fatalf("harness tool bash:\n%s", out)
	}
	got := payloads(t, p) // checks session_id and transcript_path
	post := string(got["PostToolUse-Bash.json"])
	for _, want := range []string{`"stdout": "out\n"`, `"stderr": "err\n"`, `"interrupted": false`, `"isImage": false`, `"permission_mode": "acceptEdits"`} {
		if !strings.Contains(post, want) {
			t.Errorf("PostToolUse-Bash lacks %s:\n%s", want, post)
		}
	}
}

// firstTurnStart are the events that fire before a new session's first
// message is recorded: its transcript file does not exist yet (it is made
// with the first line; a turn refused by UserPromptSubmit leaves none).
var firstTurnStart = map[string]bool{"SessionStart": true, "UserPromptSubmit": true}

var (
	sessionIDField  = regexp.MustCompile(`"session_id": "[^"]+"`)
	transcriptField = regexp.MustCompile(`"transcript_path": "([^"]+)"`)
)

// payloads reads what record.sh kept, each with the case's directories,
// the session id and the transcript path replaced by placeholders; the
// session id must be set and the transcript path have named a file.
func payloads(t *testing.T, p *project) map[string][]byte {
	t.Helper()
	dir := filepath.Join(p.dir, "payloads")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if m := transcriptField.FindSubmatch(b); m == nil {
			t.Errorf("%s: no transcript_path", e.Name())
		} else if seen, _ := os.ReadFile(filepath.Join(dir, name+".transcript")); string(seen) != "file\n" && !firstTurnStart[name] {
			t.Errorf("%s: transcript_path %s did not name a file when the hook ran", e.Name(), m[1])
		}
		if !sessionIDField.Match(b) {
			t.Errorf("%s: no session_id", e.Name())
		}
		b = transcriptField.ReplaceAllLiteral(b, []byte(`"transcript_path": "$TRANSCRIPT"`))
		b = sessionIDField.ReplaceAllLiteral(b, []byte(`"session_id": "$SESSION"`))
		b = bytes.ReplaceAll(b, []byte(p.dir), []byte("$PROJECT"))
		b = bytes.ReplaceAll(b, []byte(p.home), []byte("$HOME"))
		out[e.Name()] = b
	}
	return out
}

// modelSaw reports whether a message the model was last sent holds text.
func (o outcome) modelSaw(t *testing.T, text string) bool {
	t.Helper()
	reqs := o.srv.Requests()
	w, err := reqs[len(reqs)-1].Wire()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range w.Messages {
		if strings.Contains(m.Text(), text) {
			return true
		}
	}
	return false
}

// installPayloadHooks puts the recorder and the reminder in the project's
// .claude/hooks and claudePayloadSettings in .claude/settings.json.
func installPayloadHooks(t *testing.T, p *project) {
	t.Helper()
	for _, f := range []string{"record.sh", "reminder.py"} {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(p.dir, ".claude", "hooks", f), string(b))
		if err := os.Chmod(filepath.Join(p.dir, ".claude", "hooks", f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(p.dir, ".claude", "settings.json"), claudePayloadSettings)
}

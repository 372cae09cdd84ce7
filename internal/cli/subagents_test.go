package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dshgo/harness/internal/cli"
	"github.com/dshgo/harness/internal/cli/agente2e"
	subagentinprocess "github.com/dshgo/harness/plugins/subagent-inprocess"
	subagenttools "github.com/dshgo/harness/plugins/subagent-tools"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/subagent"
)

// convRouter answers each conversation (named by its first user message
// starting with "#", or "" for the parent) from its own script.
type convRouter struct {
	mu      sync.Mutex
	scripts map[string][]llmtest.Turn
}

func (r *convRouter) check(_ llmtest.Request, w llmtest.WireRequest) *llmtest.Turn {
	key := ""
	for _, m := range w.Messages {
		if m.Role == "user" && strings.HasPrefix(m.Text(), "#") {
			key, _, _ = strings.Cut(m.Text(), " ")
			break
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.scripts[key]
	if len(s) == 0 {
		t := llmtest.Error(500, "script "+key+" exhausted")
		return &t
	}
	r.scripts[key] = s[1:]
	return &s[0]
}

// runSub runs `harness --config CFG ARGS...` in dir (see inDir) with the
// subagent plugins in the catalog.
func runSub(t *testing.T, dir, manifest string, args ...string) runOut {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "harness.yml")
	if err := os.WriteFile(cfg, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	mods := append(agente2e.Needed(), subagent.Plugin, subagentinprocess.Plugin, subagenttools.Plugin)
	var out, errb bytes.Buffer
	env := &cli.Env{Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(""), Plugins: mods,
		LookupEnv: func(string) (string, bool) { return "", false }, Getwd: func() (string, error) { return dir, nil },
		Ctx: context.Background()}
	code := cli.Run(append([]string{"--config", cfg}, inDir(dir, args)...), env)
	return runOut{out.String(), errb.String(), code}
}

func delegationScript() map[string][]llmtest.Turn {
	child := func(key string) []llmtest.Turn {
		return []llmtest.Turn{
			llmtest.Calls(llmtest.Call{ID: "r1", Name: "read", Args: `{"file_path":"notes.txt"}`}),
			llmtest.Reply("notes say " + key),
		}
	}
	return map[string][]llmtest.Turn{
		"": {llmtest.Calls(
			llmtest.Call{ID: "t1", Name: "task", Args: `{"description":"one","prompt":"#A read notes.txt","subagent_type":"reader"}`},
			llmtest.Call{ID: "t2", Name: "task", Args: `{"description":"two","prompt":"#B read notes.txt","subagent_type":"reader"}`}),
			llmtest.Reply("both read")},
		"#A": child("A"), "#B": child("B"),
	}
}

// `harness run` delegates to two agents defined in .claude/agents: their
// events appear in stream-json with their session id and depth, text mode
// shows an indented line per child step, `harness sessions` shows the tree
// and `harness sessions show` prints a child.
func TestRunDelegatesToDefinedAgentsAndShowsTheTree(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".claude", "agents"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".claude", "agents", "reader.md"), []byte("---\nname: reader\ndescription: Reads files\ntools: Read\n---\nYou read files.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &convRouter{scripts: delegationScript()}
	srv := llmtest.New(t, nil, llmtest.WithCheck(r.check))
	state := t.TempDir()
	manifest := agentManifest(srv.URL, state, "  - name: subagents\n  - name: subagent-inprocess\n  - name: subagent-tools\n")

	res := runSub(t, dir, manifest, "run", "--output", "stream-json", "read the notes twice")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	var parent string
	children := map[string]bool{}
	var childTools []string
	for _, line := range strings.Split(strings.TrimSpace(res.stdout), "\n") {
		var e struct {
			Type, SessionID, ParentSessionID string
			Depth                            int
			ToolCall                         *struct{ Name string }
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if e.Depth == 0 && parent == "" {
			parent = e.SessionID
		}
		if e.Depth == 1 {
			if e.ParentSessionID != parent || e.SessionID == parent {
				t.Fatalf("child event %s", line)
			}
			children[e.SessionID] = true
			if e.ToolCall != nil {
				childTools = append(childTools, e.ToolCall.Name)
			}
		}
	}
	if len(children) != 2 || strings.Join(childTools, ",") != "read,read" {
		t.Fatalf("children %v, child tool calls %v\n%s", children, childTools, res.stdout)
	}

	// Text mode: an indented line per child step, call and result.
	r.scripts = delegationScript()
	res = runSub(t, dir, manifest, "run", "read the notes twice")
	if res.code != 0 || res.stdout != "both read\n" {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	for _, want := range []string{"→ task ", "  [", "] agent started · test/m1", "] step 1", "] → read notes.txt", "]   ✓ read: ", "] agent stop · 2 steps"} {
		if !strings.Contains(res.stderr, want) {
			t.Fatalf("stderr lacks %q:\n%s", want, res.stderr)
		}
	}

	// The tree: children under their parent.
	res = runSub(t, dir, manifest, "sessions")
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	if res.code != 0 || len(lines) != 7 {
		t.Fatalf("exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	for i, l := range lines[1:] {
		if nested := strings.HasPrefix(l, "└ "); nested != (i%3 != 0) {
			t.Fatalf("row %d is not in tree order:\n%s", i+1, res.stdout)
		}
	}
	var child string
	for id := range children {
		child = id
	}
	res = runSub(t, dir, manifest, "sessions", "show", child)
	if res.code != 0 || !strings.Contains(res.stdout, "read notes.txt") || !strings.Contains(res.stdout, "notes say") {
		t.Fatalf("show child: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	res = runSub(t, dir, manifest, "agents")
	if res.code != 0 || !strings.Contains(res.stdout, "reader") || !strings.Contains(res.stdout, "Reads files") {
		t.Fatalf("agents: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	// A bad definition: exit 2 naming the file and line, at boot too.
	bad := filepath.Join(dir, ".claude", "agents", "bad.md")
	if err := os.WriteFile(bad, []byte("---\nname: bad\ndescription: [x\n---\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res = runSub(t, dir, manifest, "agents")
	if res.code != 2 || !strings.Contains(res.stderr, bad+":3: did not find expected") || !strings.Contains(res.stdout, "reader") {
		t.Fatalf("bad definition: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	res = runSub(t, dir, manifest, "run", "hi")
	if res.code != 2 || !strings.Contains(res.stderr, bad+":3:") {
		t.Fatalf("run with a bad definition: exit %d\n%s", res.code, res.stderr)
	}
}

package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// tmuxSession is the real harness binary running in a detached tmux
// session of its own server (socket name unique per test): the test types
// with send-keys and reads the screen with capture-pane.
type tmuxSession struct {
	t            *testing.T
	socket, name string
}

// startTmux runs script (a shell command line) in a new tmux session of
// w×h cells. tmux must be installed; in CI (CI set) its absence fails.
func startTmux(t *testing.T, w, h int, script string) *tmuxSession {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("tmux is required in CI (.ci/run installs it): %v", err)
		}
		t.Skipf("tmux not installed: %v", err)
	}
	s := &tmuxSession{t: t, socket: fmt.Sprintf("harness-tui-e2e-%d-%d", os.Getpid(), time.Now().UnixNano()), name: "e2e"}
	if out, err := s.tmux("new-session", "-d", "-s", s.name, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), script); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = s.tmux("kill-server") })
	return s
}

func (s *tmuxSession) tmux(args ...string) (string, error) {
	out, err := exec.Command("tmux", append([]string{"-L", s.socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
	return string(out), err
}

// screen is the visible pane, as text.
func (s *tmuxSession) screen() string {
	out, _ := s.tmux("capture-pane", "-p", "-t", s.name)
	return out
}

// waitFor waits until the screen contains every one of want (20 s).
func (s *tmuxSession) waitFor(want ...string) string {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		scr := s.screen()
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(scr, w)
		}
		if ok {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the screen never showed %q; it shows:\n%s", want, scr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// keys sends tmux key names ("Enter", "C-c") or literal text (-l).
func (s *tmuxSession) keys(literal bool, keys ...string) {
	s.t.Helper()
	args := []string{"send-keys", "-t", s.name}
	if literal {
		args = append(args, "-l")
	}
	if out, err := s.tmux(append(args, keys...)...); err != nil {
		s.t.Fatalf("send-keys %q: %v\n%s", keys, err, out)
	}
}

// startHarnessTUI runs the real binary's terminal UI in repo at w×h, on
// agentManifest(modelURL, a fresh state directory, extra), with a clean
// environment, and waits for its input line.
func startHarnessTUI(t *testing.T, repo, modelURL, extra string, w, h int) *tmuxSession {
	t.Helper()
	state := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "harness.yml")
	if err := os.WriteFile(cfg, []byte(agentManifest(modelURL, state, extra)), 0o644); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf("cd %s && env -i PATH=%q HOME=%q XDG_STATE_HOME=%q LANG=C.UTF-8 TERM=xterm-256color %s --config %s; echo harness-exited-$?; sleep 60",
		repo, os.Getenv("PATH"), t.TempDir(), state, harnessBinary(t), cfg)
	s := startTmux(t, w, h, script)
	s.waitFor("Ask anything", "test/m1")
	return s
}

// quit leaves the UI with Ctrl+C twice and waits for a clean exit.
func (s *tmuxSession) quit() {
	s.t.Helper()
	s.keys(false, "C-c")
	s.waitFor("Ctrl+C again to exit")
	s.keys(false, "C-c")
	s.waitFor("harness-exited-0")
}

// TestTUIInTmuxApprovesAnEditAndShowsIt drives the real binary at 80×24:
// `harness` alone opens the UI; a typed prompt streams a turn whose edit
// asks, the modal shows the diff and the rule "always" would add; y
// approves; the file changes on disk; the answer is rendered; Ctrl+C twice
// exits and prints where the log went.
func TestTUIInTmuxApprovesAnEditAndShowsIt(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	repo := gitRepo(t, map[string]string{"a.txt": "alpha\nbeta\n"})
	srv := llmtest.New(t, []llmtest.Turn{
		toolCall("c0", "read", `{"file_path":"a.txt"}`),
		llmtest.Stream(llmtest.ReasoningDelta("the file needs a change"), llmtest.TextDelta("I will edit **a.txt**."),
			llmtest.ToolCallStart(0, "c1", "edit", `{"file_path":"a.txt","old_string":"beta","new_string":"gamma"}`), llmtest.Finish("tool_calls")),
		text("Done: `beta` is now **gamma**."),
	})
	state := t.TempDir()
	extra := "  - name: approval\n  - name: permission\n"
	cfg := filepath.Join(t.TempDir(), "harness.yml")
	if err := os.WriteFile(cfg, []byte(agentManifest(srv.URL, state, extra)), 0o644); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf("cd %s && env -i PATH=%q HOME=%q XDG_STATE_HOME=%q LANG=C.UTF-8 TERM=xterm-256color %s --config %s; echo harness-exited-$?; sleep 60",
		repo, os.Getenv("PATH"), t.TempDir(), state, harnessBinary(t), cfg)
	s := startTmux(t, 80, 24, script)

	s.waitFor("Ask anything", "test/m1")
	s.keys(true, "please change beta")
	s.keys(false, "Enter")
	scr := s.waitFor("Allow edit?", "-beta", "+gamma", "don't ask again for edit(a.txt)")
	if !strings.Contains(scr, "No, and tell the model why") {
		t.Errorf("the modal lacks the reason choice:\n%s", scr)
	}
	s.keys(true, "y")
	scr = s.waitFor("Done:", "gamma")
	if b, _ := os.ReadFile(filepath.Join(repo, "a.txt")); string(b) != "alpha\ngamma\n" {
		t.Fatalf("a.txt = %q after approving; screen:\n%s", b, scr)
	}
	for _, want := range []string{"> please change beta", "✓ read", "✓ edit", "thinking · 1 lines"} {
		if !strings.Contains(scr, want) {
			t.Errorf("the screen lacks %q:\n%s", want, scr)
		}
	}
	s.keys(false, "C-c")
	s.waitFor("Ctrl+C again to exit")
	s.keys(false, "C-c")
	s.waitFor("harness-exited-0", "harness: log of this run: ")
	logs, _ := filepath.Glob(filepath.Join(state, "*", "logs", "tui-*.log"))
	if len(logs) != 1 {
		t.Fatalf("log files under %s: %q", state, logs)
	}
	st, err := os.Stat(logs[0])
	dst, derr := os.Stat(filepath.Dir(logs[0]))
	if err != nil || derr != nil || st.Mode().Perm() != 0o600 || dst.Mode().Perm() != 0o700 {
		t.Fatalf("log file %s: %v %v %v %v", logs[0], st, err, dst, derr)
	}
}

// TestTUIInTmuxKeepsTabsAndClearsWithCtrlU drives the real binary in a
// real terminal: a Go file's tab indentation shows in the edit card's diff
// and in a Markdown code block (issue 36 item 4: tabs vanished), and Ctrl+U
// clears a typed two-line input.
func TestTUIInTmuxKeepsTabsAndClearsWithCtrlU(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	repo := gitRepo(t, map[string]string{"main.go": "package main\n\nfunc f() int {\n\treturn 1\n}\n"})
	srv := llmtest.New(t, []llmtest.Turn{
		toolCall("c0", "read", `{"file_path":"main.go"}`),
		toolCall("c1", "edit", `{"file_path":"main.go","old_string":"\treturn 1","new_string":"\treturn 2"}`),
		text("Now:\n\n```go\nfunc f() int {\n\tif ok {\n\t\treturn 2\n\t}\n}\n```\n"),
	})
	state := t.TempDir()
	cfg := filepath.Join(t.TempDir(), "harness.yml")
	if err := os.WriteFile(cfg, []byte(agentManifest(srv.URL, state, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf("cd %s && env -i PATH=%q HOME=%q XDG_STATE_HOME=%q LANG=C.UTF-8 TERM=xterm-256color %s --config %s -y; echo harness-exited-$?; sleep 60",
		repo, os.Getenv("PATH"), t.TempDir(), state, harnessBinary(t), cfg)
	s := startTmux(t, 100, 40, script)
	s.waitFor("Ask anything", "test/m1")
	s.keys(true, "fix f")
	s.keys(false, "Enter")
	scr := s.waitFor("Now:", "last turn")
	lines := strings.Split(scr, "\n")
	// at is the column of sub on the first line at or after from that has it.
	at := func(sub string, from int) (row, col int) {
		for i := from; i < len(lines); i++ {
			if c := strings.Index(lines[i], sub); c >= 0 {
				return i, c
			}
		}
		return -1, -1
	}
	if r, _ := at("-   return 1", 0); r < 0 {
		t.Errorf("the diff lost the tab of \"\\treturn 1\":\n%s", scr)
	}
	ifRow, ifCol := at("if ok {", 0)
	retRow, retCol := at("return 2", ifRow+1)
	if ifRow < 0 || retRow != ifRow+1 || retCol < ifCol+4 {
		t.Errorf("the code block lost its indentation (\"if\" at %d:%d, \"return 2\" at %d:%d):\n%s", ifRow, ifCol, retRow, retCol, scr)
	}
	s.keys(true, "first line to drop")
	s.keys(false, "C-j")
	s.keys(true, "second line to drop")
	s.waitFor("first line to drop", "second line to drop")
	s.keys(false, "C-u")
	deadline := time.Now().Add(10 * time.Second)
	for scr = s.screen(); strings.Contains(scr, "line to drop") && time.Now().Before(deadline); scr = s.screen() {
		time.Sleep(100 * time.Millisecond)
	}
	if strings.Contains(scr, "line to drop") {
		t.Errorf("Ctrl+U left the input:\n%s", scr)
	}
}

//go:build unix

package hooks_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dshgo/harness/plugins/hooks"
)

// A hook answers when it exits: a background child that keeps its stdout
// open neither delays the answer past the hook's timeout nor outlives the
// call (issue 20 item 13). The hook allows with a timeout of 1 s while its
// child would hold stdout for 30 s; the call runs, and the child is gone.
func TestAnswerWhenTheHookExitsDespiteABackgroundChild(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	body := "cat >/dev/null\nsleep 30 &\necho $! > \"" + pids + "\"\n" +
		`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'` + "\nexit 0\n"
	cmd := script(t, dir, "bg.sh", body)
	cfg := hooksConfig(dir, []hooks.MatcherGroup{{Hooks: []hooks.CommandHook{{Command: cmd, Timeout: 1, Name: "bg"}}}}, nil)
	reg := harness(t, mount{Plugin: hooks.Plugin, Config: cfg}, headless)
	if o := run(t, reg, "c1", "echo ran"); text(o) != "ran\n" || o.IsError {
		t.Fatalf("content %q isError %v, want the call to run", text(o), o.IsError)
	}
	raw, err := os.ReadFile(pids)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	if pid == 0 || alive(pid) {
		t.Fatalf("the hook's background child %q is still running after the answer", raw)
	}
}

// A PreToolUse hook that cannot run (exit status 126 or 127 from bash, a
// missing script) fails closed with a reason naming it; failOpen: true on
// that hook gives Claude Code's behaviour back: logged, the call runs
// (issue 20 item 14).
func TestPreToolUseHookThatCannotRunFailsClosed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notExec := filepath.Join(dir, "not-exec.sh")
	if err := os.WriteFile(notExec, []byte("#!/usr/bin/env bash\nexit 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.sh")
	tests := []struct{ name, command, want string }{
		{"missing script", missing, `Error: hook "H" could not run: exit status 127 (command not found): bash: line 1: ` + missing + `: No such file or directory; failing closed`},
		{"not executable", notExec, `Error: hook "H" could not run: exit status 126 (not executable): bash: line 1: ` + notExec + `: Permission denied; failing closed`},
		{"unknown command", "no-such-hook-command-xyz", `Error: hook "H" could not run: exit status 127 (command not found): bash: line 1: no-such-hook-command-xyz: command not found; failing closed`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			closed := hooksConfig(dir, []hooks.MatcherGroup{{Hooks: []hooks.CommandHook{{Command: tt.command, Name: "H"}}}}, nil)
			reg := harness(t, mount{Plugin: hooks.Plugin, Config: closed}, headless)
			if o := run(t, reg, "c1", "echo ran"); text(o) != tt.want || !o.IsError {
				t.Fatalf("fail closed: content %q, want %q", text(o), tt.want)
			}
			open := hooksConfig(dir, []hooks.MatcherGroup{{Hooks: []hooks.CommandHook{{Command: tt.command, Name: "H", FailOpen: true}}}}, nil)
			reg = harness(t, mount{Plugin: hooks.Plugin, Config: open}, headless)
			if o := run(t, reg, "c1", "echo ran"); text(o) != "ran\n" || o.IsError {
				t.Fatalf("failOpen: content %q, want the call to run", text(o))
			}
		})
	}
}

// PostToolUse fires only for calls whose tool ran: a call a PreToolUse hook
// denies gets no PostToolUse, as in Claude Code (issue 24).
func TestPostToolUseNotFiredForACallThatNeverRan(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	marks := filepath.Join(dir, "post-ran")
	deny := script(t, dir, "deny.sh", "input=$(cat)\ncase \"$input\" in *forbidden*) echo 'no' >&2; exit 2;; esac\n")
	post := script(t, dir, "post.sh", "cat >/dev/null\necho x >> \""+marks+"\"\n")
	cfg := hooksConfig(dir, []hooks.MatcherGroup{group("Bash", deny)}, []hooks.MatcherGroup{group("Bash", post)})
	reg := harness(t, mount{Plugin: hooks.Plugin, Config: cfg}, headless)
	if o := run(t, reg, "c1", "echo forbidden"); text(o) != "Error: no" {
		t.Fatalf("denied call: %q", text(o))
	}
	if _, err := os.Stat(marks); !os.IsNotExist(err) {
		t.Fatalf("PostToolUse ran for a denied call (%v)", err)
	}
	if o := run(t, reg, "c2", "echo fine"); text(o) != "fine\n" {
		t.Fatalf("allowed call: %q", text(o))
	}
	if raw, _ := os.ReadFile(marks); string(raw) != "x\n" {
		t.Fatalf("PostToolUse after an allowed call: %q", raw)
	}
}

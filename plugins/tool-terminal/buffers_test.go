package toolterminal_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/tools"
)

var spillNoteRE = regexp.MustCompile(`\[(\d+) bytes of stdout left memory before this read; the full output is in (\S+) \(read it with offset/limit\)\]`)

// A shell that prints more than the in-memory tail: the read returns the
// tail, says how many bytes left memory and names the spill file, which
// holds the whole stream.
func TestOutputTailIsBoundedWithSpillNote(t *testing.T) {
	need(t, "bwrap")
	dir := t.TempDir()
	reg := bootWith(t, dir, "      maxOutputBytes: 1000\n", "")
	scope := core.NewScopeID("session:buffers", nil)
	call(t, reg, scope, "bash", map[string]any{"command": "for i in $(seq 1 500); do echo line-$i; done", "run_in_background": true})
	out := call(t, reg, scope, "bash_output", map[string]any{"shell_id": "shell-1", "wait_ms": 20000})
	if !strings.HasSuffix(out, "[shell shell-1: exited with code 0]") || !strings.Contains(out, "line-500\n") || strings.Contains(out, "line-1\n") {
		t.Fatalf("read: want the tail and the exit:\n%s", out)
	}
	m := spillNoteRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("read: no note of the bytes that left memory:\n%s", out)
	}
	body, _, _ := strings.Cut(out, "\n[")
	if len(body) > 1000 {
		t.Fatalf("read returned %d bytes of stdout, more than the 1000-byte tail", len(body))
	}
	full, err := os.ReadFile(m[2])
	if err != nil || !strings.HasPrefix(string(full), "line-1\nline-2\n") || !strings.HasSuffix(string(full), "line-500\n") {
		t.Fatalf("spill file %s: %v (%d bytes)", m[2], err, len(full))
	}
	// Nothing new since: the next read is empty.
	if again := call(t, reg, scope, "bash_output", map[string]any{"shell_id": "shell-1"}); !strings.HasPrefix(again, "(no new output)\n") {
		t.Fatalf("second read: %s", again)
	}
}

// write_stdin feeds a shell's standard input and returns what it printed;
// close_stdin ends the input, and the shell exits.
func TestWriteStdin(t *testing.T) {
	need(t, "bwrap")
	reg := boot(t, t.TempDir())
	scope := core.NewScopeID("session:stdin", nil)
	call(t, reg, scope, "bash", map[string]any{"command": "while read -r l; do echo got:$l; done; echo eof", "run_in_background": true})
	out := call(t, reg, scope, "write_stdin", map[string]any{"shell_id": "shell-1", "input": "one\n", "wait_ms": 1000})
	if !strings.Contains(out, "got:one") || !strings.Contains(out, "[wrote 4 bytes to standard input]") || !strings.HasSuffix(out, "[shell shell-1: running]") {
		t.Fatalf("first write:\n%s", out)
	}
	out = call(t, reg, scope, "write_stdin", map[string]any{"shell_id": "shell-1", "input": "two\n", "close_stdin": true, "wait_ms": 20000})
	if !strings.Contains(out, "got:two\neof") || strings.Contains(out, "got:one") || !strings.Contains(out, "and closed it]") || !strings.HasSuffix(out, "[shell shell-1: exited with code 0]") {
		t.Fatalf("second write:\n%s", out)
	}
	o := reg.Execute(context.Background(), tools.Call{ID: "w", Name: "write_stdin", Arguments: `{"shell_id":"shell-1","input":"x"}`, Scope: scope})
	if !o.IsError || !strings.Contains(tools.TextOf(o.Content), "standard input is closed") {
		t.Fatalf("write after close: %s", tools.TextOf(o.Content))
	}
}

// Under the permission plugin as the default manifest configures it
// (acceptEdits, autoAllowSandboxed) with no one to ask: a sandboxed
// background start, bash_output and kill_shell run; write_stdin is asked,
// so refused; a deny rule on the command refuses the background start too.
func TestPermissionDefaults(t *testing.T) {
	need(t, "bwrap")
	reg := bootWith(t, t.TempDir(), "", `  - name: permission
    config:
      mode: acceptEdits
      autoAllowSandboxed: true
      deny: ["bash(sleep 301*)"]
`)
	scope := core.NewScopeID("session:perm", nil)
	call(t, reg, scope, "bash", map[string]any{"command": "sleep 300", "run_in_background": true})
	call(t, reg, scope, "bash_output", map[string]any{"shell_id": "shell-1"})
	o := reg.Execute(context.Background(), tools.Call{ID: "w", Name: "write_stdin", Arguments: `{"shell_id":"shell-1","input":"x\n"}`, Scope: scope})
	if !o.IsError || !strings.Contains(tools.TextOf(o.Content), "write_stdin") {
		t.Fatalf("write_stdin ran without asking, or failed for another reason: %s", tools.TextOf(o.Content))
	}
	t.Logf("write_stdin: %s", tools.TextOf(o.Content))
	if out := call(t, reg, scope, "kill_shell", map[string]any{"shell_id": "shell-1"}); !strings.Contains(out, "killed") {
		t.Fatalf("kill_shell: %s", out)
	}
	o = reg.Execute(context.Background(), tools.Call{ID: "d", Name: "bash", Arguments: `{"command":"sleep 301","run_in_background":true}`, Scope: scope})
	if !o.IsError || strings.Contains(tools.TextOf(o.Content), "started in the background") {
		t.Fatalf("a denied command started in the background: %s", tools.TextOf(o.Content))
	}
	t.Logf("denied: %s", tools.TextOf(o.Content))
}

package cli_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// ptyChat is `harness chat` running on a pseudo-terminal: stdin, stdout and
// stderr are the terminal, which is also its controlling terminal (so the
// approval prompt reads /dev/tty there).
type ptyChat struct {
	t    *testing.T
	cmd  *exec.Cmd
	f    *os.File
	out  *syncBuffer
	done chan struct{} // closed when the terminal output has been drained
	seen int           // offset of out up to which waitFor has matched
}

func startPTYChat(t *testing.T, dir, manifest string, args ...string) (*ptyChat, func() int) {
	t.Helper()
	cmd := processCommand(t, dir, manifest, baseEnv(), append([]string{"chat", "--plain"}, args...)...)
	f, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	c := &ptyChat{t: t, cmd: cmd, f: f, out: &syncBuffer{}, done: make(chan struct{})}
	go func() { _, _ = io.Copy(c.out, f); close(c.done) }()
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		_ = f.Close()
		<-c.done
	})
	wait := func() int {
		t.Helper()
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			t.Fatalf("chat did not exit; terminal:\n%s", c.out.String())
		}
		return cmd.ProcessState.ExitCode()
	}
	return c, wait
}

// waitFor waits until the terminal shows s after what earlier calls matched.
func (c *ptyChat) waitFor(s string) {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		all := c.out.String()
		if i := strings.Index(all[c.seen:], s); i >= 0 {
			c.seen += i + len(s)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.t.Fatalf("the terminal never showed %q after offset %d:\n%s", s, c.seen, c.out.String())
}

// signal sends sig to the chat process.
func (c *ptyChat) signal(sig os.Signal) {
	c.t.Helper()
	if err := c.cmd.Process.Signal(sig); err != nil {
		c.t.Fatal(err)
	}
}

// typeLine types line and Enter.
func (c *ptyChat) typeLine(line string) {
	c.t.Helper()
	if _, err := c.f.Write([]byte(line + "\n")); err != nil {
		c.t.Fatal(err)
	}
}

// On a terminal, the answer typed at the approval prompt goes to the
// approval prompt, not to chat: one `y` approves the call, the tool runs,
// and no stray "y" turn reaches the model; `/exit` at the prompt then
// leaves with 0.
func TestChatApprovalAnswerOnTerminalGoesToThePrompt(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	srv := llmtest.New(t, []llmtest.Turn{
		toolCall("c1", "bash", `{"command":"touch approved-by-y","description":"make a file"}`),
		text("made it"),
	})
	extra := `  - name: approval
  - name: permission
`
	c, wait := startPTYChat(t, repo, agentManifest(srv.URL, t.TempDir(), extra))
	c.waitFor("/exit to leave")
	c.waitFor("> ")
	c.typeLine("make the file")
	c.waitFor("Allow? [y] yes, once")
	time.Sleep(200 * time.Millisecond) // the prompt is reading the terminal
	c.typeLine("y")
	c.waitFor("made it")
	c.waitFor("> ")
	if _, err := os.Stat(filepath.Join(repo, "approved-by-y")); err != nil {
		t.Fatalf("one y did not approve the call: %v\nterminal:\n%s", err, c.out.String())
	}
	c.typeLine("/exit")
	if code := wait(); code != 0 {
		t.Fatalf("exit %d; terminal:\n%s", code, c.out.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2; terminal:\n%s", len(reqs), c.out.String())
	}
	w, _ := reqs[1].Wire()
	var users []string
	for _, m := range w.Messages {
		if m.Role == "user" {
			users = append(users, m.Text())
		}
	}
	if len(users) != 1 || users[0] != "make the file" {
		t.Fatalf("user messages of the second request = %q, want only the typed prompt", users)
	}
}

// SIGTERM ends chat wherever it is, like `harness run`: a running turn is
// cancelled (its process group stopped, the aborted result logged) and
// chat exits 130 with "harness: interrupted" — at the prompt, during a
// tool call, and at an approval question; and SIGHUP (the terminal went
// away) during a tool call.
func TestChatSIGTERMCancelsAndExits130(t *testing.T) {
	// Serial: left as it is while its flake is fixed separately.
	if testing.Short() {
		t.Skip("builds the binary")
	}
	for _, tc := range []struct {
		name  string
		extra string
		turn  string // typed before the signal; "" signals at the prompt
		wait  string // what the terminal shows when the signal is sent
		sleep bool   // the bash call is running
		// hangup sends SIGHUP, what the kernel sends when the terminal
		// is closed, instead of SIGTERM. (Closing the master here would
		// not hang up: the test's blocked reader keeps it open.)
		hangup bool
	}{
		{name: "at the prompt"},
		{name: "during a tool call", turn: "wait a while", wait: "→ bash", sleep: true},
		{name: "SIGHUP during a tool call", turn: "wait a while", wait: "→ bash", sleep: true, hangup: true},
		{name: "at the approval prompt", extra: "  - name: approval\n  - name: permission\n", turn: "wait a while", wait: "Allow? [y]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker := sleepMarker(47)
			repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
			srv := llmtest.New(t, []llmtest.Turn{
				toolCall("c1", "bash", `{"command":"`+marker+`","description":"wait a while"}`),
				text("never"),
			})
			state := t.TempDir()
			c, wait := startPTYChat(t, repo, agentManifest(srv.URL, state, tc.extra))
			c.waitFor("/exit to leave")
			c.waitFor("> ")
			if tc.turn != "" {
				c.typeLine(tc.turn)
				c.waitFor(tc.wait)
			}
			if tc.sleep {
				if !sawProcess(marker, 10*time.Second) {
					t.Fatalf("the bash command never started or ended early; terminal:\n%s", c.out.String())
				}
			} else {
				time.Sleep(200 * time.Millisecond) // reading the terminal
			}
			if tc.hangup {
				c.signal(syscall.SIGHUP)
			} else {
				c.signal(syscall.SIGTERM)
			}
			if code := wait(); code != 130 {
				t.Fatalf("exit %d, want 130; terminal:\n%s", code, c.out.String())
			}
			c.waitFor("harness: interrupted")
			if left := processesWith(marker); len(left) != 0 {
				t.Fatalf("processes left: %v", left)
			}
			if tc.turn == "" {
				return
			}
			result := lastToolResult(t, state)
			if result == nil || !result.IsError {
				t.Fatalf("tool result = %+v; terminal:\n%s", result, c.out.String())
			}
			if n := len(srv.Requests()); n != 1 {
				t.Fatalf("%d model requests after the signal, want 1", n)
			}
		})
	}
}

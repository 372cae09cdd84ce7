package cli_test

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// screen replays what a terminal shows for out: text at the cursor, \r to
// column 0, \n to a new line, ESC[2K clears the line, other CSI sequences
// (colours) are dropped. It returns the lines, the last one included.
func screen(out string) []string {
	lines := []string{""}
	var cur []rune
	col := 0
	flush := func() { lines[len(lines)-1] = string(cur) }
	rs := []rune(out)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; {
		case r == '\r':
			col = 0
		case r == '\n':
			flush()
			lines = append(lines, "")
			cur, col = nil, 0
		case r == 0x1b && i+1 < len(rs) && rs[i+1] == '[':
			j := i + 2
			for j < len(rs) && (rs[j] < 0x40 || rs[j] > 0x7e) {
				j++
			}
			if j < len(rs) && rs[j] == 'K' && string(rs[i+2:j]) == "2" {
				cur = nil
			}
			i = j
		default:
			for len(cur) <= col {
				cur = append(cur, ' ')
			}
			cur[col] = r
			col++
		}
	}
	flush()
	return lines
}

// On a terminal (stderr a real PTY), run keeps a status line as the last
// line of stderr: the step, tokens, elapsed time and the running tool with
// its own elapsed time, redrawn in place. A log line (a retried model
// request) prints above it and the line is drawn again under it, so no
// line of the screen mixes the two; at the end the status line is gone and
// the summary line stays. stdout (a pipe) is the answer only.
func TestStatusLineOnTerminalShowsTheToolAndStaysBelowLogLines(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	const marker = "statusline-sleep-7f3a"
	srv := llmtest.New(t, []llmtest.Turn{
		toolCall("c1", "bash", `{"command":"sleep 1.6 # `+marker+`","description":"wait"}`),
		llmtest.Error(500, "overloaded"), // retried: a WARN log line while the status line shows
		text("all done"),
	})
	cmd := processCommand(t, repo, agentManifest(srv.URL, t.TempDir(), ""), baseEnv(), "run", "wait a bit")
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 24, Cols: 200}); err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = tty.Close() // the child holds it; the master reads EOF/EIO once it exits
	term := &syncBuffer{}
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(term, ptmx); close(copied) }()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("run: %v\n%s", err, term.String())
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("run did not finish; terminal:\n%q", term.String())
	}
	<-copied
	raw := term.String()
	if stdout.String() != "all done\n" {
		t.Fatalf("stdout %q: want the answer only", stdout.String())
	}
	// The running tool is shown with its elapsed time, redrawn in place.
	re := regexp.MustCompile(`\r\x1b\[2K\x1b\[2m\[step 1 · \d+ tokens · [\d.]+s · bash ([\d.]+)s\]`)
	seen := map[string]bool{}
	for _, m := range re.FindAllStringSubmatch(raw, -1) {
		seen[m[1]] = true
	}
	if len(seen) < 2 {
		t.Fatalf("want the bash call's elapsed time redrawn at least twice, got %v; terminal:\n%q", seen, raw)
	}
	// The retry's log line is printed above the status line, which comes
	// back under it.
	warn := strings.Index(raw, "level=WARN")
	if warn < 0 {
		t.Fatalf("no retry log line; terminal:\n%q", raw)
	}
	start := strings.LastIndex(raw[:warn], "time=")
	if start < 0 || !strings.HasSuffix(raw[:start], "\r\x1b[2K") {
		t.Fatalf("the log line does not start on a cleared line: %q", raw[max(0, warn-120):warn])
	}
	after := raw[warn:]
	nl := strings.IndexByte(after, '\n')
	if nl < 0 || !strings.HasPrefix(after[nl+1:], "\r\x1b[2K\x1b[2m[step 2 · ") {
		t.Fatalf("the status line is not drawn again under the log line: %q", after)
	}
	// On the final screen no line mixes status and log or tool text, and
	// the last lines are the summary and an empty (cleared) line.
	lines := screen(raw)
	for _, l := range lines {
		if strings.Contains(l, "[step ") {
			t.Fatalf("a status line was left on the screen: %q\nall:\n%s", l, strings.Join(lines, "\n"))
		}
	}
	text := strings.Join(lines, "\n")
	if !strings.Contains(text, "→ bash ") || !strings.Contains(text, "  ✓ bash: ") || !regexp.MustCompile(`(?m)^time=\S+ level=WARN msg="model request failed before any output; retrying"`).MatchString(text) ||
		!regexp.MustCompile(`(?m)^\[2 steps · \d+ tokens · [\d.]+s\]$`).MatchString(text) {
		t.Fatalf("screen:\n%s", text)
	}
}

package tui_test

import (
	"bytes"
	"image/color"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// TestModelRouteSwitchesTheNextRequest: /model test/m2 reopens the
// session on that route; the next request names model m2 and carries the
// conversation so far (the same session). m2 has no prices: the status
// bar shows no cost (m1's, with prices, is asserted by the full turn).
func TestModelRouteSwitchesTheNextRequest(t *testing.T) {
	t.Parallel()
	u := start(t, "bypass", []llmtest.Turn{llmtest.Reply("from m1"), llmtest.Reply("from m2")}, 100, 30)
	u.submit("first", "from m1")
	u.submit("/model test/nope", "test/nope")
	u.submit("/model test/m2", "model test/m2 · test/m2")
	scr := u.submit("second", "from m2")
	lines := strings.Split(scr, "\n")
	if status := lines[len(lines)-1]; !strings.Contains(status, "test/m2 ·") || strings.Contains(status, "$") {
		t.Errorf("the status bar should show the new route and no cost (m2 has no prices): %q", status)
	}
	reqs := u.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	for i, want := range []string{"m1", "m2"} {
		w, err := reqs[i].Wire()
		if err != nil {
			t.Fatal(err)
		}
		if w.Model != want {
			t.Errorf("request %d went to model %q, want %q", i, w.Model, want)
		}
	}
	if msgs := u.userMessages(1); len(msgs) != 2 || msgs[0] != "first" || msgs[1] != "second" {
		t.Fatalf("the request after the switch lost the session: user messages %q", msgs)
	}
}

// TestCompactSummarizesTheHistory: /compact asks the model for a summary
// and reports it; the next request starts from the summary, not from the
// summarized prompt.
func TestCompactSummarizesTheHistory(t *testing.T) {
	t.Parallel()
	turns := []llmtest.Turn{
		llmtest.Reply("answer one"),
		llmtest.Reply("answer two"),
		llmtest.Reply("SUMMARY-7731: the user asked two questions"),
		llmtest.Reply("after compaction"),
	}
	u := start(t, "bypass", turns, 100, 30, `  - name: compaction
    config: {keepRecent: 0, auto: false}
`)
	for i, p := range []string{"question one", "question two"} {
		u.submit(p, []string{"answer one", "answer two"}[i])
	}
	u.submit("/compact keep the numbers", "compacted: ", "messages summarized")
	if n := len(u.srv.Requests()); n != 3 {
		t.Fatalf("%d requests after /compact, want 3 (the summary request)", n)
	}
	sum, err := u.srv.Requests()[2].Wire()
	if err != nil {
		t.Fatal(err)
	}
	if h := sum.History(); !strings.Contains(h, "question one") || !strings.Contains(string(u.srv.Requests()[2].Body), "keep the numbers") {
		t.Errorf("the summary request lacks the history or the instructions:\n%s", h)
	}
	u.submit("go on", "after compaction")
	next, err := u.srv.Requests()[3].Wire()
	if err != nil {
		t.Fatal(err)
	}
	if h := next.History(); !strings.Contains(h, "SUMMARY-7731") || strings.Contains(h, "question one") {
		t.Errorf("the request after /compact does not start from the summary:\n%s", h)
	}
}

// TestContextAndTools: /context shows the meter's projection against the
// window; /tools lists the tools the session offers.
func TestContextAndTools(t *testing.T) {
	t.Parallel()
	u := start(t, "bypass", []llmtest.Turn{llmtest.Reply("ok")}, 120, 40)
	u.submit("hello", "ok")
	scr := u.submit("/context", "context in use:", "tokens of 100000", "source:")
	if regexp.MustCompile(`context in use: 0 tokens`).MatchString(scr) {
		t.Errorf("/context counts nothing after a turn:\n%s", scr)
	}
	u.submit("/tools", "tool", "description", "bash", "edit", "write", "read", "todo")
}

// isColourSGR reports whether an SGR parameter list sets a foreground,
// background or underline colour.
func isColourSGR(params string) bool {
	for _, p := range strings.Split(params, ";") {
		p, _, _ = strings.Cut(p, ":")
		switch {
		case len(p) == 2 && (p[0] == '3' || p[0] == '4' || p[0] == '9') && p[1] >= '0' && p[1] <= '8',
			len(p) == 3 && p[:2] == "10" && p[2] >= '0' && p[2] <= '7',
			p == "58":
			return true
		}
	}
	return false
}

var sgr = regexp.MustCompile("\x1b\\[([0-9;:]*)m")

// colourSequences lists the colour-setting SGR sequences in out.
func colourSequences(out []byte) []string {
	var found []string
	for _, m := range sgr.FindAllSubmatch(out, -1) {
		if isColourSGR(string(m[1])) {
			found = append(found, string(m[0]))
		}
	}
	return found
}

// output accumulates what the program wrote to its terminal.
type output struct {
	u   *ui
	buf bytes.Buffer
}

// until reads the program's output until cond holds for what was read
// since the last reset.
func (o *output) until(what string, cond func([]byte) bool) {
	o.u.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond(o.buf.Bytes()) {
		if time.Now().After(deadline) {
			o.u.t.Fatalf("the terminal output never showed %s; %d bytes:\n%q", what, o.buf.Len(), o.buf.String())
		}
		b, _ := io.ReadAll(o.u.tm.Output())
		o.buf.Write(b)
		if len(b) == 0 {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// colourTurn runs a turn whose frames use every styled part: a user
// prompt, a tool card, a diff, Markdown (bold, code, a list), the status
// bar; it returns the terminal output.
func colourTurn(t *testing.T, noColor bool, env []string) []byte {
	u := startWith(t, setup{mode: "bypass", w: 100, h: 30, noColor: noColor,
		program: []tea.ProgramOption{tea.WithEnvironment(env)},
		turns: []llmtest.Turn{
			llmtest.Stream(llmtest.ToolCallStart(0, "c1", "edit", `{"file_path":"a.txt","old_string":"beta","new_string":"gamma"}`), llmtest.Finish("tool_calls")),
			llmtest.Reply("Edited **a.txt**:\n\n- `beta` is now `gamma`\n\n```go\nfunc main() {}\n```\n"),
		}})
	u.submit("rename beta", "is now", "last turn")
	o := &output{u: u}
	o.until("the answer", func(b []byte) bool { return bytes.Contains(b, []byte("is now")) })
	u.close()
	b, _ := io.ReadAll(u.tm.Output())
	return append(o.buf.Bytes(), b...)
}

// TestNoColorFramesHaveNoColour: with NO_COLOR set (as `harness` passes
// it: the environment and Options.NoColor) the frames written to the
// terminal carry no colour sequence, while bold and reverse remain; the
// same turn with colours on does carry colours (the check can fail).
func TestNoColorFramesHaveNoColour(t *testing.T) {
	t.Parallel()
	tty := []string{"TTY_FORCE=1", "TERM=xterm-256color", "COLORTERM=truecolor"}
	plain := colourTurn(t, true, append([]string{"NO_COLOR=1"}, tty...))
	if c := colourSequences(plain); len(c) > 0 {
		t.Errorf("NO_COLOR frames carry %d colour sequences, first %q", len(c), c[0])
	}
	if !regexp.MustCompile("\x1b\\[(?:[0-9;]*;)?7[;m]").Match(plain) {
		t.Errorf("NO_COLOR dropped the reverse video of the status bar too:\n%q", plain)
	}
	coloured := colourTurn(t, false, tty)
	if c := colourSequences(coloured); len(c) < 5 {
		t.Errorf("with colours on, only %d colour sequences: %q", len(c), c)
	}
}

// TestBackgroundColorPicksTheTheme: the UI starts dark; the terminal's
// answer to the background query (a light background) switches every
// style to the light theme, the transcript included.
func TestBackgroundColorPicksTheTheme(t *testing.T) {
	t.Parallel()
	const darkPrompt, lightPrompt = "38;2;138;180;248", "38;2;26;86;176" // #8ab4f8, #1a56b0
	u := startWith(t, setup{mode: "bypass", w: 100, h: 30, turns: []llmtest.Turn{llmtest.Reply("done")},
		program: []tea.ProgramOption{tea.WithEnvironment([]string{"TTY_FORCE=1", "TERM=xterm-256color", "COLORTERM=truecolor"})}})
	u.submit("paint me", "done", "last turn")
	o := &output{u: u}
	o.until("the prompt in the dark theme's colour", func(b []byte) bool { return bytes.Contains(b, []byte(darkPrompt)) })
	if bytes.Contains(o.buf.Bytes(), []byte(lightPrompt)) {
		t.Fatalf("the light theme's colour before the background was known")
	}
	o.buf.Reset()
	u.tm.Send(tea.BackgroundColorMsg{Color: color.White})
	o.until("the prompt in the light theme's colour", func(b []byte) bool { return bytes.Contains(b, []byte(lightPrompt)) })
	u.tm.Send(tea.BackgroundColorMsg{Color: color.Black})
	o.buf.Reset()
	o.until("the prompt back in the dark theme's colour", func(b []byte) bool { return bytes.Contains(b, []byte(darkPrompt)) })
}

// stable masks what changes between runs in a screen: durations, session
// ids, the cost's last digits.
func stable(scr string) string {
	scr = regexp.MustCompile(`\b\d+(\.\d+)?(ms|s)\b|\b\d+m\d\ds\b`).ReplaceAllString(scr, "T")
	scr = regexp.MustCompile(`session [0-9A-Za-z_-]{8,}`).ReplaceAllString(scr, "session ID")
	lines := strings.Split(scr, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestGoldenApprovalScreen: the approval modal for an edit at 80×24 —
// diff, rule and choices — against testdata/TestGoldenApprovalScreen.golden
// (go test -update rewrites it).
func TestGoldenApprovalScreen(t *testing.T) {
	t.Parallel()
	u := start(t, "default", []llmtest.Turn{
		llmtest.Stream(llmtest.ToolCallStart(0, "c1", "edit", `{"file_path":"a.txt","old_string":"beta","new_string":"gamma"}`), llmtest.Finish("tool_calls")),
		llmtest.Reply("fine"),
	}, 80, 24)
	scr := u.submit("rename beta", "Allow edit?", "[r] No, and tell the model why")
	// The context share and cost here are the meter's estimate of the
	// system prompt and tools, which other plugins' texts change.
	// The status bar is cut at 80 columns where the durations' widths say.
	scr = regexp.MustCompile(`(?m)ctx [0-9.]+% · \$[0-9.]+.*$`).ReplaceAllString(scr, "ctx N% · $$N …")
	golden.RequireEqual(t, stable(scr))
	u.typeText("n")
	u.wait("fine")
}

// TestGoldenFinishedTurn: a finished turn with reasoning, a bash card and
// a Markdown answer at 80×24, against its golden file.
func TestGoldenFinishedTurn(t *testing.T) {
	t.Parallel()
	u := start(t, "bypass", thinkBashAnswer("check\nthe file", "## Result\n\nThe file is **fine**:\n\n1. `a.txt` has two lines\n2. nothing to do\n"), 80, 24)
	scr := u.submit("check a.txt", "nothing to do", "last turn")
	golden.RequireEqual(t, stable(scr))
}

// TestExitCommandEndsTheProgram: /exit ends the program (the session is
// closed by the release that follows).
func TestExitCommandEndsTheProgram(t *testing.T) {
	t.Parallel()
	u := start(t, "bypass", nil, 80, 24)
	u.typeText("/exit")
	u.enter()
	u.tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}

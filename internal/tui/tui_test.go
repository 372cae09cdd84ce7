package tui_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"go.uber.org/goleak"

	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/internal/tui"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// teatest waits for SIGINT in a goroutine for the whole test binary.
		goleak.IgnoreTopFunction("os/signal.signal_recv"),
		goleak.IgnoreAnyFunction("github.com/charmbracelet/x/exp/teatest/v2.NewTestModel.func2"),
		// glamour's code highlighting (chroma) starts regexp2's shared clock,
		// which sleeps until it has been idle for a while.
		goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock"))
}

// manifest is a full agent harness over the scripted model at url: the
// real file and bash tools, approval and permission (mode), commands.
func manifest(url, state, mode string, extra ...string) string {
	return fmt.Sprintf(`plugins:
  - name: subprocess-local
  - name: systemprompt
  - name: tools
  - name: prompt-tools
  - name: tokenmeter
  - name: llm
  - name: llm-openai
    config:
      provider: test
      baseURL: %s
      apiKey: sk-test
      maxRetries: 0
      models:
        - {name: m1, default: true, contextWindow: 100000, prices: {cacheMiss: 1, cacheHit: 0.1, output: 2}}
        - {name: m2, contextWindow: 50000}
  - name: sessions-jsonl
    config: {stateDir: %s}
  - name: agent
  - name: tool-bash
  - name: tool-fs
  - name: commands
  - name: tool-todo
  - name: approval
    config: {answerer: headless}
  - name: permission
    config: {mode: %s}
`, url, state, mode) + strings.Join(extra, "")
}

// ui is the UI under test: a booted harness, the model, and the teatest
// program driving it.
type ui struct {
	t     *testing.T
	m     *tui.Model
	tm    *teatest.TestModel
	srv   *llmtest.Server
	dir   string
	opts  tui.Options
	close func() // quits the program and releases the UI (idempotent)
}

func start(t *testing.T, mode string, turns []llmtest.Turn, w, h int, extra ...string) *ui {
	t.Helper()
	return startWith(t, setup{mode: mode, turns: turns, w: w, h: h, extra: extra, noColor: true})
}

// setup is a UI under test's configuration beyond the defaults of start.
type setup struct {
	mode    string
	turns   []llmtest.Turn
	w, h    int
	extra   []string // manifest rows added at the end
	noColor bool
	program []tea.ProgramOption // e.g. the environment the colour profile is detected from
	budget  agent.Budget        // the sessions' budget
}

func startWith(t *testing.T, s setup) *ui {
	t.Helper()
	srv := llmtest.New(t, s.turns)
	state, dir := t.TempDir(), repo(t)
	hs := harnesstest.Start(t, manifest(srv.URL, state, s.mode, s.extra...))
	o := tui.Options{Agent: harnesstest.Service(t, hs, agent.Key), Root: hs.Root.Context(), Cwd: dir, StateDir: state, NoColor: s.noColor}
	o.Session.Budget = s.budget
	return open(t, o, srv, s.w, s.h, s.program...)
}

func open(t *testing.T, o tui.Options, srv *llmtest.Server, w, h int, popts ...tea.ProgramOption) *ui {
	t.Helper()
	m := tui.New(o)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h), teatest.WithProgramOptions(popts...))
	release, err := m.Bind(tm.Send)
	if err != nil {
		t.Fatal(err)
	}
	u := &ui{t: t, m: m, tm: tm, srv: srv, dir: o.Cwd, opts: o}
	var once sync.Once
	u.close = func() {
		once.Do(func() {
			_ = tm.Quit()
			tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := release(ctx); err != nil {
				t.Errorf("release: %v", err)
			}
		})
	}
	t.Cleanup(u.close)
	u.wait("/help for commands")
	return u
}

// repo is a workspace with a.txt.
func repo(t *testing.T) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\nbeta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// wait polls the model's last frame until it shows every one of want.
func (u *ui) wait(want ...string) string {
	u.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		scr := u.m.Screen()
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(scr, w)
		}
		if ok {
			return scr
		}
		if time.Now().After(deadline) {
			u.t.Fatalf("the screen never showed %q; it shows:\n%s", want, scr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (u *ui) typeText(s string) { u.tm.Type(s) }

// submit types text, presses Enter and waits for the screen to show every
// one of want; it returns that screen.
func (u *ui) submit(text string, want ...string) string {
	u.t.Helper()
	u.typeText(text)
	u.enter()
	return u.wait(want...)
}
func (u *ui) press(code rune, mod tea.KeyMod) {
	u.tm.Send(tea.KeyPressMsg{Code: code, Mod: mod})
}
func (u *ui) enter() { u.press(tea.KeyEnter, 0) }

// lastUser is the last user message the model received.
func (u *ui) userMessages(req int) []string {
	u.t.Helper()
	w, err := u.srv.Requests()[req].Wire()
	if err != nil {
		u.t.Fatal(err)
	}
	var out []string
	for _, m := range w.Messages {
		if m.Role == "user" {
			out = append(out, m.Text())
		}
	}
	return out
}

func toolResults(u *ui, req int) []string {
	w, err := u.srv.Requests()[req].Wire()
	if err != nil {
		u.t.Fatal(err)
	}
	var out []string
	for _, m := range w.Messages {
		if m.Role == "tool" {
			out = append(out, m.Text())
		}
	}
	return out
}

// thinkBashAnswer is a turn of two steps: reasoning and a bash call that
// prints "one" and "two", then answer (5000 prompt and 100 completion
// tokens).
func thinkBashAnswer(reasoning, answer string) []llmtest.Turn {
	return []llmtest.Turn{
		llmtest.Stream(llmtest.ReasoningDelta(reasoning), llmtest.ToolCallStart(0, "c1", "bash", `{"command":"printf 'one\\ntwo\\n'","description":"print"}`), llmtest.Finish("tool_calls")),
		llmtest.Stream(llmtest.TextDelta(answer), llmtest.FinishWithUsage("stop", llmtest.Usage{PromptTokens: 5000, CompletionTokens: 100, TotalTokens: 5100})),
	}
}

// TestFullTurnStreamsMarkdownReasoningAndAToolCard: a turn with reasoning,
// a bash call and a Markdown answer shows the prompt, a collapsed thinking
// block, a done card with the output tail, and the rendered answer.
func TestFullTurnStreamsMarkdownReasoningAndAToolCard(t *testing.T) {
	t.Parallel()
	u := start(t, "bypass", thinkBashAnswer("look at\nthe files", "The files are **fine**:\n\n- `a.txt`\n"), 100, 30)
	scr := u.submit("check the files", "The files are fine:", "•", "a.txt", "$0.0052", "last turn")
	for _, want := range []string{"> check the files", "▸ thinking · 2 lines", "✓ bash printf", "│ one", "│ two", "ctx 5.0%", "$0.0052", "perm bypass"} {
		if !strings.Contains(scr, want) {
			t.Errorf("screen lacks %q:\n%s", want, scr)
		}
	}
	if strings.Contains(scr, "**fine**") {
		t.Errorf("Markdown was not rendered:\n%s", scr)
	}
	// Ctrl+O expands the reasoning.
	u.press('o', tea.ModCtrl)
	u.wait("▾ thinking", "look at", "the files")
}

// TestApprovalShowsTheDiffAndTheRuleAndSendsTheReason: an edit in mode
// default asks; the modal shows the unified diff and the rule "always"
// adds; "no, and tell the model why" sends the typed reason as the result.
func TestApprovalShowsTheDiffAndTheRuleAndSendsTheReason(t *testing.T) {
	t.Parallel()
	u := start(t, "default", []llmtest.Turn{
		llmtest.Stream(llmtest.ToolCallStart(0, "c0", "read", `{"file_path":"a.txt"}`), llmtest.Finish("tool_calls")),
		llmtest.Stream(llmtest.ToolCallStart(0, "c1", "edit", `{"file_path":"a.txt","old_string":"beta","new_string":"gamma"}`), llmtest.Finish("tool_calls")),
		llmtest.Reply("understood"),
	}, 80, 24)
	scr := u.submit("rename beta", "Allow edit?", "-beta", "+gamma", "[a] Yes, and don't ask again for edit(a.txt)", "[r] No, and tell the model why")
	if strings.Contains(scr, "Ask anything") {
		t.Errorf("the editor shows under the modal:\n%s", scr)
	}
	u.typeText("r")
	u.wait("tell the model why")
	u.submit("keep beta, it is an API name", "understood", "✗ edit")
	if b, _ := os.ReadFile(filepath.Join(u.dir, "a.txt")); string(b) != "alpha\nbeta\n" {
		t.Fatalf("a.txt changed: %q", b)
	}
	res := toolResults(u, 2)
	if len(res) != 2 || res[1] != `Error: the user rejected tool "edit" and said: keep beta, it is an API name` {
		t.Fatalf("tool results the model saw: %q", res)
	}
}

// TestAlwaysAddsTheShownRule: "a" grants the shown rule; the next call it
// covers runs without a question.
func TestAlwaysAddsTheShownRule(t *testing.T) {
	t.Parallel()
	u := start(t, "default", []llmtest.Turn{
		llmtest.Stream(llmtest.ToolCallStart(0, "c1", "bash", `{"command":"touch f1.txt","description":"w"}`), llmtest.Finish("tool_calls")),
		llmtest.Stream(llmtest.ToolCallStart(0, "c2", "bash", `{"command":"touch f2.txt","description":"w"}`), llmtest.Finish("tool_calls")),
		llmtest.Reply("both written"),
	}, 100, 30)
	u.submit("write files", "Allow bash?", "$ touch f1.txt", "don't ask again for bash(touch *)")
	u.typeText("a")
	u.wait("both written")
	for _, f := range []string{"f1.txt", "f2.txt"} {
		if _, err := os.Stat(filepath.Join(u.dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	u.submit("/permissions", "permission mode: default", "allowed this session", "bash(touch *)")
}

// TestEscInterruptsTheTurnAndKeepsTheSession: Esc during a long bash call
// stops it; the next prompt continues the same session.
func TestEscInterruptsTheTurnAndKeepsTheSession(t *testing.T) {
	t.Parallel()
	const marker = "sleep 37.91"
	u := start(t, "bypass", []llmtest.Turn{
		llmtest.Stream(llmtest.ToolCallStart(0, "c1", "bash", `{"command":"`+marker+`","description":"wait"}`), llmtest.Finish("tool_calls")),
		llmtest.Reply("after the interruption"),
	}, 100, 30)
	u.submit("wait", "● bash "+marker, "running", "Esc interrupts")
	u.press(tea.KeyEscape, 0)
	u.wait("interrupted · the session is kept")
	if ps, _ := exec.Command("pgrep", "-f", marker).Output(); len(ps) > 0 {
		t.Errorf("the bash command still runs: pids %s", ps)
	}
	u.submit("go on", "after the interruption")
	if msgs := u.userMessages(1); len(msgs) != 2 || msgs[0] != "wait" || msgs[1] != "go on" {
		t.Fatalf("the second turn's user messages: %q", msgs)
	}
}

// TestMultiLinePasteIsOneMessage: a paste with newlines, plus Ctrl+J, is
// one prompt.
func TestMultiLinePasteIsOneMessage(t *testing.T) {
	t.Parallel()
	u := start(t, "bypass", []llmtest.Turn{llmtest.Reply("got it")}, 80, 24)
	u.tm.Send(tea.PasteMsg{Content: "first line\nsecond line"})
	u.press('j', tea.ModCtrl)
	u.typeText("third")
	u.wait("first line", "second line", "third")
	u.enter()
	u.wait("got it")
	if msgs := u.userMessages(0); len(msgs) != 1 || msgs[0] != "first line\nsecond line\nthird" {
		t.Fatalf("user messages: %q", msgs)
	}
}

// TestHistoryIsRecalledAndPersistedPerDirectory: Up recalls earlier
// prompts, Ctrl+R searches them, and a new UI in the same directory has
// them (the file is private).
func TestHistoryIsRecalledAndPersistedPerDirectory(t *testing.T) {
	t.Parallel()
	u := start(t, "bypass", []llmtest.Turn{llmtest.Reply("r1"), llmtest.Reply("r2")}, 80, 24)
	for i, p := range []string{"first prompt", "second prompt"} {
		u.submit(p, fmt.Sprintf("r%d", i+1))
	}
	u.press(tea.KeyUp, 0)
	u.wait("│ second prompt")
	u.press(tea.KeyUp, 0)
	u.wait("│ first prompt")
	u.press(tea.KeyDown, 0)
	u.press(tea.KeyDown, 0)
	u.press('r', tea.ModCtrl)
	u.typeText("fir")
	u.wait("(reverse-i-search)`fir': first prompt")
	u.enter()
	u.wait("│ first prompt")

	files, _ := filepath.Glob(filepath.Join(u.opts.StateDir, "history", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("history files: %q", files)
	}
	if st, _ := os.Stat(files[0]); st.Mode().Perm() != 0o600 {
		t.Fatalf("history file mode %v", st.Mode())
	}
	u.close()
	again := open(t, u.opts, u.srv, 80, 24)
	again.press(tea.KeyUp, 0)
	again.wait("│ second prompt")
}

// TestResizeKeepsEveryLineInsideTheWindow: at 80×24 and after resizes to
// 120×40 and 60×20, the frame has exactly the window's rows and no row is
// wider than the window.
func TestResizeKeepsEveryLineInsideTheWindow(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a long answer line that must wrap at the window width ", 8)
	u := start(t, "bypass", []llmtest.Turn{llmtest.Reply(long)}, 80, 24)
	u.submit("talk", "a long answer")
	for _, size := range [][2]int{{80, 24}, {120, 40}, {60, 20}} {
		u.tm.Send(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		deadline := time.Now().Add(10 * time.Second)
		for {
			lines := strings.Split(u.m.Screen(), "\n")
			widest := 0
			for _, l := range lines {
				widest = max(widest, ansi.StringWidth(l))
			}
			if len(lines) == size[1] && widest <= size[0] && widest >= size[0]-1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%dx%d: %d rows, widest %d:\n%s", size[0], size[1], len(lines), widest, u.m.Screen())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// TestSlashCommands: completion, /help from the registry, /cost, /todos,
// /clear opening a new session.
func TestSlashCommands(t *testing.T) {
	t.Parallel()
	u := start(t, "bypass", []llmtest.Turn{llmtest.Reply("hello")}, 100, 30)
	u.typeText("/he")
	u.wait("› /help  list the commands")
	u.enter()
	u.wait("/compact [instructions]", "/permissions", "/resume [id]")
	u.submit("hi", "hello")
	first := u.m.Screen()
	u.submit("/cost", "tokens this session", "cost: $0.")
	u.submit("/todos", "no todos")
	scr := u.submit("/clear", "new session · test/m1")
	if strings.Contains(scr, "> hi") || scr == first {
		t.Fatalf("/clear kept the transcript:\n%s", scr)
	}
}

// TestResumeModelAndSessions: /sessions lists the stored session, /clear
// starts another, /resume picks the first back (its prompt replayed), and
// /model lists the configured routes.
func TestResumeModelAndSessions(t *testing.T) {
	t.Parallel()
	u := start(t, "bypass", []llmtest.Turn{llmtest.Reply("hello back")}, 100, 30)
	u.submit("hello there", "hello back")
	u.submit("/sessions", "│ turns", "│ hello there")
	u.submit("/clear", "new session · test/m1")
	u.submit("/resume", "Resume a session", "hello there")
	u.enter()
	u.wait("resumed ", "> hello there", "hello back")
	u.submit("/model", "model: test/m1", "test/m1")
}

// TestBashCardShowsTheOutputWhileItRuns: a real bash command printing
// lines with a pause between them, then waiting for the test: its card
// shows the lines printed so far (and the bytes) while it still runs,
// the last line when it is done.
func TestBashCardShowsTheOutputWhileItRuns(t *testing.T) {
	t.Parallel()
	cmd := `echo line-one; sleep 0.3; printf 'bar 10%%\\rbar 99%%\\n'; echo line-two; until test -e go.flag; do sleep 0.05; done; echo line-three`
	u := start(t, "bypass", []llmtest.Turn{
		llmtest.Stream(llmtest.ToolCallStart(0, "c1", "bash", `{"command":"`+strings.ReplaceAll(cmd, `"`, `\"`)+`","description":"lines"}`), llmtest.Finish("tool_calls")),
		llmtest.Reply("all lines printed"),
	}, 100, 30)
	u.submit("print lines", "● bash", "running", "│ line-one")
	scr := u.wait("● bash", "│ line-one", "│ bar 99%", "│ line-two", " B")
	for _, l := range strings.Split(scr, "\n") {
		if strings.HasPrefix(l, "  │ ") && (strings.Contains(l, "line-three") || strings.Contains(l, "bar 10%")) {
			t.Fatalf("the running card shows what was not printed yet, or a line a carriage return replaced:\n%s", scr)
		}
	}
	if err := os.WriteFile(filepath.Join(u.dir, "go.flag"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	u.wait("✓ bash", "│ line-three", "all lines printed")
}

// TestFailedBashCardsSayFailed: a bash call its own deadline stops and one
// that exits 3 return values (not errors) to the model; their cards are
// ✗ "failed" with the reason, never ✓.
func TestFailedBashCardsSayFailed(t *testing.T) {
	t.Parallel()
	u := start(t, "bypass", []llmtest.Turn{
		llmtest.Calls(llmtest.Call{ID: "slow", Name: "bash", Args: `{"command":"sleep 30","description":"wait","timeoutMs":300}`}),
		llmtest.Calls(llmtest.Call{ID: "exit3", Name: "bash", Args: `{"command":"echo partial; exit 3"}`}),
		llmtest.Reply("both failed"),
	}, 100, 30)
	scr := u.submit("run them", "both failed", "│ timed out after 300ms", "│ exit code 3")
	if strings.Count(scr, "✗ bash") != 2 || strings.Count(scr, "failed · ") != 2 || strings.Contains(scr, "✓ bash") {
		t.Fatalf("a failed call is not shown as a failure:\n%s", scr)
	}
}

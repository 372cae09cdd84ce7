package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/internal/cli"
	"github.com/dshgo/harness/internal/cli/agente2e"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// agentManifest is a full agent harness whose "test" route points at the
// scripted model url (model m1) and whose sessions live in state.
func agentManifest(url, state, extra string) string {
	return fmt.Sprintf(`plugins:
  - name: subprocess-local
  - name: systemprompt
    config:
      personaSuffix: "Working directory: {{cwd}}"
  - name: tools
  - name: prompt-tools
  - name: tokenmeter
  - name: llm
  - id: test
    name: llm-openai
    config:
      provider: test
      baseURL: %s
      apiKey: sk-test
      maxRetries: 2
      retryBaseDelay: 1ms
      models:
        - {name: m1, default: true, contextWindow: 1000000}
  - name: sessions-jsonl
    config:
      stateDir: %s
  - name: agent
  - name: tool-bash
  - name: tool-fs
  - name: tool-search
%s`, url, state, extra)
}

// gitRepo makes a temporary git repository with one commit.
func gitRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"init", "-q"}, {"add", "-A"},
		{"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "init"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

type runOut struct {
	stdout, stderr string
	code           int
}

// runAgent runs `harness --config CFG ARGS...` in-process in dir (see
// inDir).
func runAgent(t *testing.T, dir, manifest string, stdin string, args ...string) runOut {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "harness.yml")
	if err := os.WriteFile(cfg, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	mods := agente2e.Needed() // in-process: no std catalog registered
	var out, errb bytes.Buffer
	env := &cli.Env{
		Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(stdin),
		Plugins:   mods,
		LookupEnv: func(string) (string, bool) { return "", false },
		Getwd:     func() (string, error) { return dir, nil },
		Ctx:       context.Background(),
	}
	code := cli.Run(append([]string{"--config", cfg}, inDir(dir, args)...), env)
	return runOut{out.String(), errb.String(), code}
}

// inDir makes dir the working directory of an in-process command without
// changing the process's: Env.Getwd (set by the caller) covers discovery
// and the sessions' directory, and the session commands (run, chat,
// compact) also get --cwd dir, the default directory of the rows that take
// one (tool-bash, hooks, permission, ...).
func inDir(dir string, args []string) []string {
	if len(args) == 0 || slices.Contains(args, "--cwd") {
		return args
	}
	switch args[0] {
	case "run", "chat", "compact":
		return append([]string{args[0], "--cwd", dir}, args[1:]...)
	}
	return args
}

func toolCall(id, name, args string) llmtest.Turn {
	return llmtest.Stream(llmtest.ToolCallStart(0, id, name, args), llmtest.Finish("tool_calls"))
}

func text(s string) llmtest.Turn {
	return llmtest.Stream(llmtest.TextDelta(s), llmtest.FinishWithUsage("stop", llmtest.Usage{PromptTokens: 900, CompletionTokens: 12, TotalTokens: 912}))
}

// The end-to-end run: on a real git repository the scripted model greps,
// reads, edits a file, runs git through bash and answers. The file changes
// on disk, stdout has the answer, the log replays to the conversation the
// model saw, exit 0.
func TestRunEndToEndOnGitRepository(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{
		"main.go": "package main\n\nfunc main() {\n\tprintln(\"helo\") // TODO: fix spelling\n}\n",
		"README":  "demo\n",
	})
	srv := llmtest.New(t, []llmtest.Turn{
		toolCall("c1", "grep", `{"pattern":"TODO"}`),
		toolCall("c2", "read", `{"file_path":"main.go"}`),
		toolCall("c3", "edit", `{"file_path":"main.go","old_string":"println(\"helo\") // TODO: fix spelling","new_string":"println(\"hello\")"}`),
		toolCall("c4", "bash", `{"command":"git diff --stat","description":"show what changed"}`),
		text("Fixed the spelling in main.go."),
	})
	state := t.TempDir()
	r := runAgent(t, repo, agentManifest(srv.URL, state, ""), "", "run", "fix the TODO in this repo")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if r.stdout != "Fixed the spelling in main.go.\n" {
		t.Fatalf("stdout = %q", r.stdout)
	}
	b, _ := os.ReadFile(filepath.Join(repo, "main.go"))
	if !strings.Contains(string(b), `println("hello")`) || strings.Contains(string(b), "TODO") {
		t.Fatalf("main.go = %s", b)
	}
	for _, want := range []string{"→ grep", "→ read", "→ edit", "→ bash", "✓ bash"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests", len(reqs))
	}
	last, _ := reqs[4].Wire()
	if sys := last.Messages[0]; sys.Role != "system" || !strings.Contains(sys.Text(), "Working directory: "+repo) {
		t.Fatalf("system prompt = %q", sys.Text())
	}
	toolsSeen := map[string]bool{}
	for _, tl := range last.Tools {
		toolsSeen[tl.Function.Name] = true
	}
	for _, n := range []string{"bash", "read", "write", "edit", "grep", "glob"} {
		if !toolsSeen[n] {
			t.Errorf("tool %s not offered (%v)", n, toolsSeen)
		}
	}
	var bashOut string
	for _, m := range last.Messages {
		if m.Role == "tool" && m.ToolCallID == "c4" {
			bashOut = m.Text()
		}
		if m.Role == "tool" && strings.HasPrefix(m.Text(), "Error:") {
			t.Errorf("tool %s failed: %s", m.ToolCallID, m.Text())
		}
	}
	if !strings.Contains(bashOut, "1 file changed") {
		t.Fatalf("bash result = %q", bashOut)
	}
	// The session log replays to exactly what the model saw, plus its answer.
	list, err := agent.ListSessions(state)
	if err != nil || len(list) != 1 || list[0].Cwd != repo {
		t.Fatalf("sessions: %+v %v", list, err)
	}
	recs, err := agent.ReadJournal(list[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	replay := agent.Replay(recs)
	sent := last.Messages[1:]
	if len(replay) != len(sent)+1 {
		t.Fatalf("replay has %d messages, request had %d", len(replay), len(sent))
	}
	for i, m := range sent {
		got := replay[i]
		if string(got.Role) != m.Role || got.Content != m.Text() || got.ToolCallID != m.ToolCallID || len(got.ToolCalls) != len(m.ToolCalls) {
			t.Fatalf("message %d: replay %+v, sent %+v", i, got, m)
		}
	}
	if a := replay[len(replay)-1]; a.Role != llm.RoleAssistant || a.Content != "Fixed the spelling in main.go." {
		t.Fatalf("last = %+v", a)
	}
	// `harness sessions` lists it.
	s := runAgent(t, repo, agentManifest(srv.URL, state, ""), "", "sessions")
	if s.code != 0 || !strings.Contains(s.stdout, list[0].ID) || !strings.Contains(s.stdout, "fix the TODO in this repo") {
		t.Fatalf("sessions: %d %s %s", s.code, s.stdout, s.stderr)
	}
}

func TestRunOutputFormats(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "alpha\n"})
	t.Run("stream-json", func(t *testing.T) {
		srv := llmtest.New(t, []llmtest.Turn{toolCall("c1", "read", `{"file_path":"a.txt"}`), text("alpha it is")})
		r := runAgent(t, repo, agentManifest(srv.URL, t.TempDir(), ""), "", "run", "-o", "stream-json", "read a.txt")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		var types []string
		sc := bufio.NewScanner(strings.NewReader(r.stdout))
		var sid string
		for sc.Scan() {
			var e struct {
				V         int    `json:"v"`
				Type      string `json:"type"`
				SessionID string `json:"sessionId"`
				Result    *struct {
					Text string `json:"result"`
				} `json:"result"`
			}
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.V != 1 || e.SessionID == "" {
				t.Fatalf("line %q: %v", sc.Text(), err)
			}
			if sid == "" {
				sid = e.SessionID
			}
			if e.Type != "text" {
				types = append(types, e.Type)
			}
			// docs/cli.md: session {cwd, model, resumed}; usage {usage,
			// total, estimated}: the booleans are there when false too.
			var keys map[string]json.RawMessage
			_ = json.Unmarshal(sc.Bytes(), &keys)
			for typ, want := range map[string][]string{"session": {"cwd", "model", "resumed"}, "usage": {"usage", "total", "estimated"}} {
				for _, k := range want {
					if _, ok := keys[k]; e.Type == typ && !ok {
						t.Errorf("%s event has no %q: %s", typ, k, sc.Text())
					}
				}
			}
			if e.Type == "result" && e.Result.Text != "alpha it is" {
				t.Fatalf("result = %+v", e.Result)
			}
		}
		want := "session,user,step,usage,assistant,tool_call,tool_result,step,usage,assistant,result"
		if strings.Join(types, ",") != want {
			t.Fatalf("events = %s", strings.Join(types, ","))
		}
	})
	t.Run("json", func(t *testing.T) {
		srv := llmtest.New(t, []llmtest.Turn{text("just this")})
		r := runAgent(t, repo, agentManifest(srv.URL, t.TempDir(), ""), "the prompt from stdin", "run", "--output", "json", "-")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		var res struct {
			Result    string    `json:"result"`
			SessionID string    `json:"sessionId"`
			IsError   bool      `json:"isError"`
			Steps     int       `json:"steps"`
			Usage     llm.Usage `json:"usage"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.Result != "just this" || res.IsError || res.Steps != 1 || res.Usage.PromptTokens != 900 || res.SessionID == "" {
			t.Fatalf("json = %s (%v)", r.stdout, err)
		}
		// docs/cli.md: every usage figure is present, zero or not.
		var raw struct {
			Usage map[string]json.RawMessage `json:"usage"`
		}
		_ = json.Unmarshal([]byte(r.stdout), &raw)
		for _, k := range []string{"promptTokens", "completionTokens", "totalTokens", "cacheHitTokens", "cacheMissTokens", "reasoningTokens"} {
			if _, ok := raw.Usage[k]; !ok {
				t.Errorf("usage has no %q: %s", k, r.stdout)
			}
		}
		w, _ := srv.Requests()[0].Wire()
		if w.Messages[len(w.Messages)-1].Text() != "the prompt from stdin" {
			t.Fatalf("prompt = %q", w.Messages[len(w.Messages)-1].Text())
		}
	})
}

func TestRunFailuresExitCodes(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "alpha\n"})
	cases := []struct {
		name   string
		turns  []llmtest.Turn
		args   []string
		code   int
		stderr []string
		stdout string
	}{
		{"401", []llmtest.Turn{llmtest.Error(401, "Authentication Fails, Your api key: ****abcd is invalid")}, nil, 1,
			[]string{"AUTH", "401", "Authentication Fails", "API key"}, ""},
		{"429 then success", []llmtest.Turn{llmtest.Error(429, "rate limited").RetryAfter("0"), text("ok")}, nil, 0, nil, "ok\n"},
		{"stream cut mid-way", []llmtest.Turn{{Events: []string{llmtest.TextDelta("partial ")}, Drop: true}}, nil, 1,
			[]string{"model request failed"}, "partial \n"},
		{"max steps", []llmtest.Turn{toolCall("c1", "read", `{"file_path":"a.txt"}`), toolCall("c2", "read", `{"file_path":"a.txt"}`)},
			[]string{"--max-steps", "2"}, 1, []string{"maximum number of steps reached: 2"}, ""},
		{"unknown model", nil, []string{"--model", "nope/x"}, 2, []string{"nope"}, ""},
		{"no prompt", nil, []string{""}, 2, []string{"no prompt"}, ""},
		{"max steps 0", nil, []string{"--max-steps", "0", "hi"}, 2, []string{"--max-steps 0: must be at least 1"}, ""},
		{"bad output", nil, []string{"-o", "yaml"}, 2, []string{"--output"}, ""},
		{"unknown session", nil, []string{"--session", "20990101T000000-deadbeef"}, 2, []string{"session not found"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t, tc.turns)
			args := append([]string{"run"}, tc.args...)
			if tc.name != "no prompt" {
				args = append(args, "do it")
			}
			r := runAgent(t, repo, agentManifest(srv.URL, t.TempDir(), ""), "", args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", r.code, tc.code, r.stdout, r.stderr)
			}
			for _, s := range tc.stderr {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, r.stderr)
				}
			}
			if r.stdout != tc.stdout {
				t.Errorf("stdout = %q, want %q", r.stdout, tc.stdout)
			}
		})
	}
}

// A missing API key is a configuration error naming the variable.
func TestRunMissingAPIKey(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	requireUnset(t, unsetKeyVar)
	m := strings.Replace(agentManifest("https://api.deepseek.com", t.TempDir(), ""), "apiKey: sk-test", "apiKeyEnv: "+unsetKeyVar, 1)
	r := runAgent(t, repo, m, "", "run", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, unsetKeyVar) {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
}

// --continue resumes the working directory's latest session.
func TestRunContinue(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	state := t.TempDir()
	srv := llmtest.New(t, []llmtest.Turn{text("first"), text("second")})
	m := agentManifest(srv.URL, state, "")
	if r := runAgent(t, repo, m, "", "run", "one"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r := runAgent(t, repo, m, "", "run", "--continue", "-o", "json", "two")
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	w, _ := srv.Requests()[1].Wire()
	if got := w.History(); got != "user:one|assistant:first|user:two" {
		t.Fatalf("history = %s", got)
	}
	list, _ := agent.ListSessions(state)
	if len(list) != 1 || list[0].Turns != 2 {
		t.Fatalf("sessions = %+v", list)
	}
	s := runAgent(t, repo, m, "", "sessions", "--json", "--here")
	var got []agent.SessionInfo
	if err := json.Unmarshal([]byte(s.stdout), &got); err != nil || s.code != 0 || len(got) != 1 || got[0].ID != list[0].ID || got[0].Title != "one" || got[0].Messages != 4 {
		t.Fatalf("sessions --json: %d %s %v", s.code, s.stdout, err)
	}
	s = runAgent(t, t.TempDir(), m, "", "sessions", "--json", "--here")
	if s.code != 0 || strings.TrimSpace(s.stdout) != "[]" {
		t.Fatalf("sessions --here elsewhere: %s", s.stdout)
	}
}

func TestChatScripted(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	srv := llmtest.New(t, []llmtest.Turn{text("hello there"), text("bye")})
	r := runAgent(t, repo, agentManifest(srv.URL, t.TempDir(), ""), "hi\n/tools\n/context\n/bogus\nsecond\n/exit\n", "chat")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"hello there\n", "bash\t", "read\t", "prompt tokens: 900", "bye\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "unknown command /bogus") {
		t.Errorf("stderr: %s", r.stderr)
	}
	if len(srv.Requests()) != 2 {
		t.Fatalf("%d requests", len(srv.Requests()))
	}
}

// Session flags reach the request: --append-system-prompt, --cwd, and
// --thinking on a model without a thinking switch is a usage error.
func TestRunSessionFlags(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	other := t.TempDir()
	srv := llmtest.New(t, []llmtest.Turn{text("ok")})
	r := runAgent(t, other, agentManifest(srv.URL, t.TempDir(), ""), "", "run", "--cwd", repo, "--append-system-prompt", "Answer in {{French}}.", "hi")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	w, _ := srv.Requests()[0].Wire()
	sys := w.Messages[0].Text()
	if !strings.HasSuffix(sys, "Answer in {{French}}.") || !strings.Contains(sys, "Working directory: "+repo) {
		t.Fatalf("system prompt:\n%s", sys)
	}
	srv2 := llmtest.New(t, nil)
	r = runAgent(t, repo, agentManifest(srv2.URL, t.TempDir(), ""), "", "run", "--thinking", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "UNSUPPORTED_OPTION") {
		t.Fatalf("--thinking: exit %d: %s", r.code, r.stderr)
	}
	r = runAgent(t, repo, agentManifest(srv2.URL, t.TempDir(), ""), "", "run", "--thinking", "--no-thinking", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "mutually exclusive") {
		t.Fatalf("both: exit %d: %s", r.code, r.stderr)
	}
}

// harness chat applies a changed harness.yml between turns: the next
// request carries the new configuration and the same conversation; a
// broken file is reported and the running configuration stays.
func TestChatReloadsTheManifestBetweenTurns(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	srv := llmtest.New(t, []llmtest.Turn{text("first answer"), text("second answer"), text("third answer"), text("fourth answer"), text("fifth answer")})
	state := t.TempDir()
	cfgDir := t.TempDir()
	cfg := filepath.Join(cfgDir, "harness.yml")
	save := func(s string) { t.Helper(); write(t, cfgDir, "harness.yml", s) }
	base := agentManifest(srv.URL, state, "")
	save(base)
	c := startChat(t, repo, cfg)
	say := func(line, want string) { t.Helper(); c.say(line, c.out, want) }
	say("one", "first answer")
	// A changed agent row reloads the agent service itself: the session
	// is resumed on the new one.
	changed := strings.Replace(base, "Working directory: {{cwd}}", "RELOADED-SUFFIX", 1)
	changed = strings.Replace(changed, "  - name: agent\n", "  - name: agent\n    config:\n      maxSteps: 7\n", 1)
	save(changed)
	say("two", "second answer")
	save("plugins: [\n")
	say("three", "third answer")
	// Trees that start but cannot run the session are rolled back: an
	// option the model cannot honour, then no agent row at all.
	save(strings.Replace(changed, "      maxSteps: 7", "      maxSteps: 7\n      thinking: enabled", 1))
	say("four", "fourth answer")
	noAgent := strings.Replace(changed, "  - name: agent\n", "  - name: agent\n    disabled: true\n", 1)
	if noAgent == changed {
		t.Fatal("no agent row to disable")
	}
	save(noAgent)
	say("five", "fifth answer")
	if code := c.end(); code != 0 {
		t.Fatalf("exit %d: %s", code, c.errb.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests", len(reqs))
	}
	// The session's recorded system prompt is sent again byte for byte (the
	// request prefix only grows); the reloaded section reaches the model
	// once, as a message at the end of the history.
	for i := range reqs {
		w, err := reqs[i].Wire()
		if err != nil {
			t.Fatal(err)
		}
		if sys, want := w.Messages[0].Text(), "Working directory: "+repo; !strings.HasSuffix(sys, want) {
			t.Errorf("request %d system prompt ends %q, want %q", i+1, sys[max(0, len(sys)-40):], want)
		}
		var texts []string
		for _, m := range w.Messages[1:] {
			text := m.Text()
			if strings.HasPrefix(text, "[Parts of the system prompt changed") && strings.Contains(text, "\n\nRELOADED-SUFFIX") {
				text = "(changed: RELOADED-SUFFIX)"
			}
			texts = append(texts, text)
		}
		all := []string{"one", "first answer", "two", "(changed: RELOADED-SUFFIX)", "second answer", "three", "third answer", "four", "fourth answer", "five"}
		n := 2*i + 1
		if i > 0 {
			n++
		}
		if wantMsgs := all[:n]; strings.Join(texts, "|") != strings.Join(wantMsgs, "|") {
			t.Errorf("request %d messages %q, want %q (the session continues)", i+1, texts, wantMsgs)
		}
	}
	stderr := c.errb.String()
	if strings.Count(stderr, "configuration reloaded from "+cfg+": config changed: systemprompt, agent\n") != 1 || !strings.Contains(stderr, "the changed configuration was not applied (the running one stays): ") ||
		!strings.Contains(stderr, "the changed configuration was not applied (the previous one runs again): reopening session") ||
		!strings.Contains(stderr, "the changed configuration was not applied (the previous one runs again): it has no active agent plugin") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// The reload notice names only the files whose content changed since the
// configuration last applied, and what changed row by row.
func TestChatReloadNoticeNamesTheChangedFileAndRows(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	srv := llmtest.New(t, []llmtest.Turn{text("first answer"), text("second answer"), text("third answer"), text("fourth answer")})
	cfgDir := t.TempDir()
	cfg, patch := filepath.Join(cfgDir, "harness.yml"), filepath.Join(cfgDir, "patch.yml")
	base := agentManifest(srv.URL, t.TempDir(), "")
	write(t, cfgDir, "harness.yml", base)
	write(t, cfgDir, "patch.yml", "- id: systemprompt\n  config:\n    personaSuffix: P1\n")
	c := startChat(t, repo, cfg, "--patch", patch)
	say := func(line, want string) { t.Helper(); c.say(line, c.out, want) }
	say("one", "first answer")
	write(t, cfgDir, "patch.yml", "- id: systemprompt\n  config:\n    personaSuffix: P2\n")
	say("two", "second answer")
	// A broken manifest is not applied; once fixed (with a new row) it is
	// named, and the patch, unchanged since then, is not.
	write(t, cfgDir, "harness.yml", "plugins: [\n")
	say("three", "third answer")
	write(t, cfgDir, "harness.yml", base+"  - id: spare\n    name: tool-todo\n    disabled: true\n")
	say("four", "fourth answer")
	if code := c.end(); code != 0 {
		t.Fatalf("exit %d: %s", code, c.errb.String())
	}
	var notices []string
	for _, l := range strings.Split(c.errb.String(), "\n") {
		if i := strings.Index(l, "configuration reloaded"); i >= 0 {
			notices = append(notices, l[i:])
		}
	}
	want := []string{
		"configuration reloaded from " + patch + ": config changed: systemprompt",
		"configuration reloaded from " + cfg + ": added: spare",
	}
	if strings.Join(notices, "\n") != strings.Join(want, "\n") {
		t.Errorf("notices:\n%s\nwant:\n%s\nstderr:\n%s", strings.Join(notices, "\n"), strings.Join(want, "\n"), c.errb.String())
	}
}

// A reply cut by the output token limit (finish_reason "length") keeps
// exit 0 (the model finished; reason "length" in json), and the notice
// starts on its own line even when stdout and stderr are one stream.
func TestRunLengthNoticeOnItsOwnLine(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	for _, tc := range []struct{ name, reply, want string }{
		{"cut mid-line", "the answer was trunc", "the answer was trunc\nharness: the reply was cut by the model's output token limit\n"},
		{"cut after a newline", "a full line\n", "a full line\nharness: the reply was cut by the model's output token limit\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
			srv := llmtest.New(t, []llmtest.Turn{llmtest.Stream(llmtest.TextDelta(tc.reply), llmtest.Finish("length"))})
			cmd := processCommand(t, repo, agentManifest(srv.URL, t.TempDir(), ""), baseEnv(), "run", "answer at length")
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out // as with 2>&1
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v (want exit 0)\n%s", err, out.String())
			}
			// The turn's summary line follows ([1 step · N tokens · S s]).
			got, summary, _ := strings.Cut(out.String(), "[1 step · ")
			if got != tc.want || !strings.HasSuffix(summary, "s]\n") {
				t.Fatalf("output = %q, want %q then the summary line", out.String(), tc.want)
			}
		})
	}
}

// -c and --patch paths are relative to where the command was typed, not
// to --cwd (the harness binary, started in proj).
func TestRelativeManifestPathsWithCwd(t *testing.T) {
	t.Parallel()
	proj := t.TempDir()
	repo := gitRepo(t, map[string]string{"a.txt": "a\n"})
	srv := llmtest.New(t, []llmtest.Turn{text("ok")})
	if err := os.WriteFile(filepath.Join(proj, "h.yml"), []byte(agentManifest(srv.URL, t.TempDir(), "")), 0o644); err != nil {
		t.Fatal(err)
	}
	patch := "- id: systemprompt\n  config: {personaSuffix: PATCHED-SUFFIX}\n"
	if err := os.WriteFile(filepath.Join(proj, "p.yml"), []byte(patch), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(harnessBinary(t), "-c", "h.yml", "--patch", "p.yml", "run", "--no-claude-settings", "--cwd", repo, "hi")
	cmd.Dir, cmd.Env = proj, baseEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	w, err := srv.Requests()[0].Wire()
	if err != nil {
		t.Fatal(err)
	}
	if sys := w.Messages[0].Text(); !strings.HasSuffix(sys, "PATCHED-SUFFIX") {
		t.Fatalf("system prompt ends %q", sys[max(0, len(sys)-40):])
	}
}

// inChat is `harness --config CFG chat` run in this process in a directory,
// its stdin a pipe the test writes lines to.
type inChat struct {
	t         *testing.T
	in        *io.PipeWriter
	out, errb *syncBuffer
	code      chan int
}

// startChat starts chat on the manifest file cfg with dir as the working
// directory (see inDir).
func startChat(t *testing.T, dir, cfg string, flags ...string) *inChat {
	t.Helper()
	mods := agente2e.Needed()
	stdinR, stdinW := io.Pipe()
	c := &inChat{t: t, in: stdinW, out: &syncBuffer{}, errb: &syncBuffer{}, code: make(chan int, 1)}
	env := &cli.Env{Stdout: c.out, Stderr: c.errb, Stdin: stdinR, Plugins: mods,
		LookupEnv: func(string) (string, bool) { return "", false }, Getwd: func() (string, error) { return dir, nil },
		Ctx: context.Background()}
	go func() {
		c.code <- cli.Run(append(append([]string{"--config", cfg}, flags...), inDir(dir, []string{"chat"})...), env)
	}()
	return c
}

// say types line; when want is not empty it waits until b shows want.
func (c *inChat) say(line string, b *syncBuffer, want string) {
	c.t.Helper()
	_, _ = io.WriteString(c.in, line+"\n")
	if want == "" {
		return
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(b.String(), want) {
		if time.Now().After(deadline) {
			c.t.Fatalf("no %q; stdout:\n%s\nstderr:\n%s", want, c.out.String(), c.errb.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// end closes stdin and returns chat's exit status.
func (c *inChat) end() int {
	c.t.Helper()
	_ = c.in.Close()
	select {
	case code := <-c.code:
		return code
	case <-time.After(20 * time.Second):
		c.t.Fatalf("chat did not end; stderr:\n%s", c.errb.String())
		return -1
	}
}

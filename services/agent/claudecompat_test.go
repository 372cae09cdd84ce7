package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/internal/hookstest"
	"github.com/dshgo/harness/plugins/hooks"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/subprocess"
)

// A Stop hook in the shape of the well-known loop hooks (ralph-wiggum):
// it reads transcript_path as Claude Code writes it, takes the last line
// with "role":"assistant", and blocks with a reason until the assistant's
// text content block says "done"; then it lets the agent stop and leaves a
// systemMessage. Through the real hooks plugin, a real bash script
// (hookstest's, its first rule reading the transcript) and the llmtest
// scripted model: the turn continues as often as the hook blocks
// (here once), the hook gets one session_id, the transcript path and
// last_assistant_message, and the systemMessage reaches the user as a
// notice.
func TestStopLoopHookReadsTheClaudeTranscript(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []llmtest.Turn{textTurn("working"), textTurn("done")})
	hook := hookstest.NewScript(t,
		hookstest.Rule{Contains: []string{`"hook_event_name":"Stop"`}, LastAssistant: []string{`"content":[{"type":"text","text":"done"}]`},
			Stdout: `{"systemMessage":"loop finished"}`},
		hookstest.Rule{Contains: []string{`"hook_event_name":"Stop"`}, Stdout: `{"decision":"block","reason":"not done yet: continue"}`})
	f.rc.Plugin(subprocess.Plugin, nil)
	hf := f.rc.Plugin(hooks.Plugin, hooks.Config{Cwd: t.TempDir(), Hooks: hooks.Events{Stop: []hooks.MatcherGroup{{Hooks: []hooks.CommandHook{{Type: "command", Command: hook.Path}}}}}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := hf.Await(ctx); err != nil {
		t.Fatal(err)
	}
	var notices []string
	ss := f.open(agent.Options{Observer: func(e agent.Event) {
		if e.Type == agent.EventNotice {
			notices = append(notices, e.Source+": "+e.Text)
		}
	}})
	res, err := ss.Run(ctx, "finish the job")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "done" {
		t.Fatalf("final text %q, want the second reply", res.Text)
	}
	lines := hook.Lines(t)
	if len(lines) != 2 {
		t.Fatalf("the Stop hook ran %d times, want 2: %q", len(lines), lines)
	}
	for i, want := range []string{`"last_assistant_message":"working"`, `"last_assistant_message":"done"`} {
		if !strings.Contains(lines[i], want) || !strings.Contains(lines[i], `"session_id":"`+ss.ID()+`"`) ||
			!strings.Contains(lines[i], `"hook_event_name":"Stop"`) || !strings.Contains(lines[i], `"permission_mode":"default"`) {
			t.Errorf("stop payload %d: %s", i+1, lines[i])
		}
	}
	if !strings.Contains(lines[0], `"stop_hook_active":false`) || !strings.Contains(lines[1], `"stop_hook_active":true`) {
		t.Errorf("stop_hook_active: %q", lines)
	}
	if len(notices) != 1 || notices[0] != "hooks:Stop: loop finished" {
		t.Errorf("notices %q", notices)
	}
	// The conversation went on with the hook's reason as the next user message.
	var users []string
	for _, m := range ss.History() {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	if !strings.Contains(strings.Join(users, "|"), "not done yet: continue") {
		t.Errorf("user messages %q", users)
	}
}

// A UserPromptSubmit hook in the usual shape: exit 2 with a reason on
// stderr blocks a prompt (the model is never called), JSON
// additionalContext adds context the model sees with the prompt. Through the
// real hooks plugin and the llmtest scripted model.
func TestUserPromptSubmitHookBlocksAndAddsContext(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []llmtest.Turn{textTurn("ok")})
	dir := t.TempDir()
	hook := filepath.Join(dir, "prompt-guard.sh")
	body := `#!/usr/bin/env bash
input=$(cat)
case "$input" in
  *password*) echo "prompts must not contain credentials" >&2; exit 2 ;;
esac
echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"branch: main, 3 files changed"}}'
`
	if err := os.WriteFile(hook, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	f.rc.Plugin(subprocess.Plugin, nil)
	hf := f.rc.Plugin(hooks.Plugin, hooks.Config{Cwd: dir, Hooks: hooks.Events{UserPromptSubmit: []hooks.MatcherGroup{{Hooks: []hooks.CommandHook{{Type: "command", Command: hook}}}}}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := hf.Await(ctx); err != nil {
		t.Fatal(err)
	}
	ss := f.open(agent.Options{})
	res, err := ss.Run(ctx, "my password is hunter2")
	if err == nil && (res == nil || !res.IsError) || len(f.srv.Requests()) != 0 {
		t.Fatalf("blocked prompt: %+v %v, %d model calls", res, err, len(f.srv.Requests()))
	}
	if res, err := ss.Run(ctx, "fix the build"); err != nil || res.Text != "ok" {
		t.Fatalf("accepted prompt: %+v %v", res, err)
	}
	if h := f.wire(0).History(); !strings.Contains(h, "fix the build") || !strings.Contains(h, "branch: main, 3 files changed") || strings.Contains(h, "hunter2") {
		t.Fatalf("request history:\n%s", h)
	}
}

//go:build unix

package hooks_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/plugins/hooks"
	"github.com/dshgo/harness/plugins/permission"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/subagent"
	"github.com/dshgo/harness/services/tools"
)

// person is a front end's answerer (as the TUI provides under
// tools.AnswererKey): it counts the questions and answers each with answer.
type person struct {
	mu     sync.Mutex
	asked  []string
	answer tools.ApprovalOutcome
}

func (p *person) Answer(_ context.Context, req tools.ApprovalRequest) (tools.ApprovalOutcome, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, req.Arguments)
	return p.answer, nil
}

func (p *person) questions() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.asked)
}

// pythonHook writes a Python hook run by /usr/bin/python3 that appends the
// event it reads to log, one JSON line each.
func pythonHook(t *testing.T, dir, name, log string) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Fatalf("/usr/bin/python3 is required: %v", err)
	}
	p := filepath.Join(dir, name)
	body := `#!/usr/bin/python3
import json, sys
event = json.load(sys.stdin)
with open(` + mustJSON(log) + `, "a") as f:
    f.write(json.dumps(event) + "\n")
`
	if err := os.WriteFile(p, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

// logged reads the JSON lines a hook appended to log.
func logged(t *testing.T, log string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// wantFields checks that ev has the common fields Claude Code sends and the
// given values.
func wantFields(t *testing.T, ev map[string]any, want map[string]any) {
	t.Helper()
	for _, k := range []string{"session_id", "transcript_path", "cwd", "hook_event_name", "permission_mode"} {
		if _, ok := ev[k]; !ok {
			t.Errorf("%v: no %s", ev["hook_event_name"], k)
		}
	}
	for k, v := range want {
		if got := mustJSON(ev[k]); got != mustJSON(v) {
			t.Errorf("%v: %s = %s, want %s", ev["hook_event_name"], k, got, mustJSON(v))
		}
	}
}

// PermissionRequest hooks answer for the person: exit 2 denies without
// asking; decision.behavior allow grants a call only the permission mode
// asks about, not one an ask rule asks about (the person is asked then).
// When a person is about to be asked, the Notification hooks run
// (permission_prompt), a Python one here.
func TestPermissionRequestAndNotificationHooks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reqLog := filepath.Join(dir, "permission.log")
	decide := script(t, dir, "decide.sh", `input=$(cat)
printf '%s\n' "$input" >> `+reqLog+`
case "$input" in
  *deny-me*) echo "the hook says no" >&2; exit 2 ;;
  *allow-me*) echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}' ;;
esac
`)
	noteLog := filepath.Join(dir, "notification.log")
	notify := pythonHook(t, dir, "notify.py", noteLog)
	p := &person{answer: tools.ApprovalAllowedOnce}
	ui := core.Define("ui", func(c *core.Context, _ struct{}) error {
		return core.Provide[tools.Answerer](c, tools.AnswererKey, p)
	}, core.WithProvides(tools.AnswererKey.Name()))
	cfg := hooks.Config{Cwd: dir, Hooks: hooks.Events{
		PermissionRequest: []hooks.MatcherGroup{group("Bash", decide)},
		Notification:      []hooks.MatcherGroup{group("permission_prompt", notify)},
	}}
	reg := harness(t, mount{Plugin: permission.Plugin, Config: permissionDefault(dir)}, mount{Plugin: hooks.Plugin, Config: cfg},
		mount{Plugin: ui}, headless)

	if o := run(t, reg, "c1", "echo deny-me"); !o.IsError || !strings.Contains(text(o), "the hook says no") {
		t.Fatalf("deny: %q", text(o))
	}
	if n := p.questions(); n != 0 {
		t.Fatalf("a denied call was asked %d times", n)
	}
	if o := run(t, reg, "c2", "echo allow-me"); o.IsError || text(o) != "allow-me\n" {
		t.Fatalf("allow of the mode's ask: %q", text(o))
	}
	if n := p.questions(); n != 0 {
		t.Fatalf("a call the hook allowed was asked %d times", n)
	}
	if evs := logged(t, noteLog); len(evs) != 0 {
		t.Fatalf("notifications without a question: %v", evs)
	}
	p.answer = tools.ApprovalRejected
	if o := run(t, reg, "c3", "git push allow-me"); !o.IsError || !strings.Contains(text(o), "the user rejected") {
		t.Fatalf("an ask rule's call must go to the person: %q", text(o))
	}
	p.answer = tools.ApprovalAllowedOnce
	if o := run(t, reg, "c4", "echo plain"); o.IsError || text(o) != "plain\n" {
		t.Fatalf("undecided: %q", text(o))
	}
	if n := p.questions(); n != 2 {
		t.Fatalf("the person was asked %d times, want 2", n)
	}
	reqs := logged(t, reqLog)
	if len(reqs) != 4 {
		t.Fatalf("%d PermissionRequest events, want 4", len(reqs))
	}
	wantFields(t, reqs[3], map[string]any{"hook_event_name": "PermissionRequest", "tool_name": "Bash",
		"tool_input": map[string]any{"command": "echo plain"}, "permission_mode": "default", "cwd": dir})
	notes := logged(t, noteLog)
	if len(notes) != 2 {
		t.Fatalf("%d Notification events, want 2 (one per question): %v", len(notes), notes)
	}
	wantFields(t, notes[1], map[string]any{"hook_event_name": "Notification", "notification_type": "permission_prompt",
		"message": "Harness needs your permission to use Bash"})
}

// SessionEnd hooks run once when a real agent session closes, with the
// session's id and transcript.
func TestSessionEndHookRunsWhenTheSessionCloses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "end.log")
	end := pythonHook(t, dir, "end.py", log)
	a := harnesstest.StartAgent(t, `  - name: subprocess-local
  - name: hooks
    config:
      cwd: `+mustJSON(dir)+`
      hooks:
        SessionEnd:
          - hooks: [{type: command, command: `+mustJSON(end)+`}]
`)
	a.Model.Enqueue(llmtest.Reply("ok"))
	ss, err := a.Service.Open(context.Background(), agent.Options{Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ss.Run(context.Background(), "hello"); err != nil {
		t.Fatal(err)
	}
	if evs := logged(t, log); len(evs) != 0 {
		t.Fatalf("SessionEnd before the close: %v", evs)
	}
	if err := ss.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	evs := logged(t, log)
	if len(evs) != 1 {
		t.Fatalf("%d SessionEnd events, want 1", len(evs))
	}
	wantFields(t, evs[0], map[string]any{"hook_event_name": "SessionEnd", "reason": "other", "session_id": ss.ID()})
	if tp, _ := evs[0]["transcript_path"].(string); tp == "" {
		t.Error("no transcript_path")
	} else if _, err := os.Stat(tp); err != nil {
		t.Errorf("transcript_path: %v", err)
	}
}

// SubagentStart and SubagentStop hooks run on the subagent service's
// events, selected by the agent type, with Claude Code's fields.
func TestSubagentHooks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "subagent.log")
	rec := script(t, dir, "rec.sh", "cat >> "+log+"\n")
	c := lifecycleRoot(t, dir, hooks.Events{
		SubagentStart: []hooks.MatcherGroup{group("reviewer", rec)},
		SubagentStop:  []hooks.MatcherGroup{group("", rec)},
	})
	info := subagent.Info{ID: "child-1", Parent: "parent-1", Agent: "reviewer"}
	subagent.Started.Emit(context.Background(), c.Here(), info)
	subagent.Started.Emit(context.Background(), c.Here(), subagent.Info{ID: "child-2", Parent: "parent-1", Agent: "other"})
	subagent.Settled.Emit(context.Background(), c.Here(), subagent.Settlement{Info: info, Outcome: subagent.Outcome{Text: "looks good"}})
	evs := logged(t, log)
	if len(evs) != 2 {
		t.Fatalf("%d events, want 2 (the matcher selects the agent type): %v", len(evs), evs)
	}
	wantFields(t, evs[0], map[string]any{"hook_event_name": "SubagentStart", "session_id": "parent-1", "agent_id": "child-1", "agent_type": "reviewer"})
	wantFields(t, evs[1], map[string]any{"hook_event_name": "SubagentStop", "agent_id": "child-1", "agent_type": "reviewer",
		"stop_hook_active": false, "last_assistant_message": "looks good"})
}

package hooks_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/plugins/hooks"
	"github.com/dshgo/harness/services/agent/lifecycle"
	"github.com/dshgo/harness/services/subprocess"
)

// lifecycleRoot mounts subprocess-local and the hooks plugin with events.
func lifecycleRoot(t *testing.T, dir string, ev hooks.Events) *core.Context {
	t.Helper()
	root := core.NewRoot(core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(func() { _ = root.Dispose(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, m := range []mount{{Plugin: subprocess.Plugin}, {Plugin: hooks.Plugin, Config: hooks.Config{Cwd: dir, Hooks: ev}}} {
		f := root.Context().Plugin(m.Plugin, m.Config)
		if err := f.Await(ctx); err != nil || f.State() != core.StateActive {
			t.Fatalf("%s: %v %v", m.Plugin.Name(), f.State(), err)
		}
	}
	return root.Context()
}

func TestSessionStartAddsContext(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain := script(t, dir, "plain.sh", "cat >/dev/null\necho 'plain stdout is context'\n")
	onlyResume := script(t, dir, "resume.sh", "cat >/dev/null\necho resumed\n")
	c := lifecycleRoot(t, dir, hooks.Events{SessionStart: []hooks.MatcherGroup{
		group("startup", examples(t, "session-context.sh"), plain), group("resume", onlyResume),
	}})
	d, err := lifecycle.SessionStart.Run(context.Background(), c.Here(), lifecycle.Start{Session: lifecycle.Session{ID: "s1", Cwd: dir}, Source: "startup"}, lifecycle.Pass[lifecycle.Start])
	if err != nil {
		t.Fatal(err)
	}
	want := "current git branch: none|plain stdout is context"
	if got := strings.Join(d.AdditionalContext, "|"); got != want || d.Block {
		t.Fatalf("decision %+v, want contexts %q", d, want)
	}
}

func TestUserPromptSubmitBlocksAndAddsContext(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	guard := script(t, dir, "guard.sh", `input=$(cat)
case "$input" in
  *password*) echo "prompt mentions a password" >&2; exit 2 ;;
esac
echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"today is a holiday"}}'
`)
	record := script(t, dir, "record.sh", "cat > \"$CLAUDE_PROJECT_DIR/prompt.json\"\n")
	c := lifecycleRoot(t, dir, hooks.Events{UserPromptSubmit: []hooks.MatcherGroup{group("", guard, record)}})
	submit := func(text string) lifecycle.Decision {
		d, err := lifecycle.UserPromptSubmit.Run(context.Background(), c.Here(), lifecycle.Prompt{Session: lifecycle.Session{ID: "s1", Cwd: dir}, Prompt: text}, lifecycle.Pass[lifecycle.Prompt])
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := submit("my password is hunter2"); !d.Block || d.Reason != "prompt mentions a password" {
		t.Fatalf("blocked prompt: %+v", d)
	}
	if d := submit("fix the build"); d.Block || strings.Join(d.AdditionalContext, "|") != "today is a holiday" {
		t.Fatalf("accepted prompt: %+v", d)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "prompt.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sent struct {
		TranscriptPath string `json:"transcript_path"`
	}
	_ = json.Unmarshal(raw, &sent)
	want := `{"session_id":"s1","transcript_path":"` + sent.TranscriptPath + `","cwd":"` + dir + `","hook_event_name":"UserPromptSubmit","permission_mode":"default","prompt":"fix the build"}` + "\n"
	if string(raw) != want || sent.TranscriptPath == "" {
		t.Fatalf("payload %s\nwant %s", raw, want)
	}
}

func TestStopHookKeepsTheTurnGoing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stop := script(t, dir, "stop.sh", `input=$(cat)
case "$input" in
  *'"stop_hook_active":true'*) exit 0 ;;
esac
echo '{"decision":"block","reason":"run the tests before stopping"}'
`)
	c := lifecycleRoot(t, dir, hooks.Events{Stop: []hooks.MatcherGroup{group("", stop)}})
	fire := func(active bool) lifecycle.Decision {
		d, err := lifecycle.Stop.Run(context.Background(), c.Here(), lifecycle.Stopping{Session: lifecycle.Session{ID: "s1"}, StopHookActive: active}, lifecycle.Pass[lifecycle.Stopping])
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := fire(false); !d.Block || d.Reason != "run the tests before stopping" {
		t.Fatalf("first stop: %+v", d)
	}
	if d := fire(true); d.Block {
		t.Fatalf("second stop: %+v", d)
	}
}

func TestLifecycleFailuresFailOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := script(t, dir, "bad.sh", "cat >/dev/null\necho '{broken'\n")
	c := lifecycleRoot(t, dir, hooks.Events{UserPromptSubmit: []hooks.MatcherGroup{group("", bad)}})
	d, err := lifecycle.UserPromptSubmit.Run(context.Background(), c.Here(), lifecycle.Prompt{Prompt: "hi"}, lifecycle.Pass[lifecycle.Prompt])
	if err != nil || d.Block {
		t.Fatalf("decision %+v err %v", d, err)
	}
}

package toolterminal_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dshgo/harness"
	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/services/commands"
	"github.com/dshgo/harness/services/tools"
)

// session is what a front end passes to a command.
type session struct{ scope *core.ScopeID }

func (s session) ID() string           { return "s" }
func (s session) Scope() *core.ScopeID { return s.scope }

// /tasks lists the shells of the front end's session with their status,
// and no other session's.
func TestTasksCommandListsTheSessionsShells(t *testing.T) {
	need(t, "bwrap")
	dir := t.TempDir()
	h := harnesstest.Start(t, fmt.Sprintf(`plugins:
  - name: commands
  - name: subprocess-local
    config:
      sandbox: {mode: workspace-write}
  - name: tools
  - name: tool-bash
    config: {cwd: %q}
  - name: tool-terminal
    config: {cwd: %q}
`, dir, dir))
	reg := harnesstest.Service(t, h, tools.Key)
	cmds := harnesstest.Service(t, h, commands.Key)
	mine, other := core.NewScopeID("session:mine", nil), core.NewScopeID("session:other", nil)
	call(t, reg, mine, "bash", map[string]any{"command": "sleep 300", "run_in_background": true})
	call(t, reg, mine, "bash", map[string]any{"command": "exit 4", "run_in_background": true})
	call(t, reg, other, "bash", map[string]any{"command": "sleep 299", "run_in_background": true})
	call(t, reg, mine, "bash_output", map[string]any{"shell_id": "shell-2", "wait_ms": 20000})
	tasks, ok := cmds.Lookup("tasks")
	if !ok || tasks.Run == nil {
		t.Fatal("no /tasks command")
	}
	rep, err := tasks.Run(context.Background(), commands.Invocation{Session: session{mine}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.Text, "| shell-1 | running |") || !strings.Contains(rep.Text, "`sleep 300`") ||
		!strings.Contains(rep.Text, "| shell-2 | exited with code 4 |") || strings.Contains(rep.Text, "sleep 299") {
		t.Fatalf("/tasks:\n%s", rep.Text)
	}
	rep, _ = tasks.Run(context.Background(), commands.Invocation{Session: session{core.NewScopeID("session:none", nil)}})
	if rep.Text != "No background shells." {
		t.Fatalf("/tasks of a session without shells: %q", rep.Text)
	}
}

// The embedded default manifest mounts tool-terminal: its tools are
// offered and /tasks is registered.
func TestDefaultManifestHasBackgroundShells(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Chdir(t.TempDir())
	h := harnesstest.Start(t, string(harness.DefaultManifest))
	reg := harnesstest.Service(t, h, tools.Key)
	for _, name := range []string{"bash", "bash_output", "kill_shell", "write_stdin"} {
		if _, ok := reg.Get(name, nil); !ok {
			t.Errorf("the default manifest offers no %s tool", name)
		}
	}
	if _, ok := harnesstest.Service(t, h, commands.Key).Lookup("tasks"); !ok {
		t.Error("the default manifest has no /tasks")
	}
}

package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/checkpoints"
	"github.com/dshgo/harness/services/commands"
)

// session is what /rewind needs of a front end's session.
type session struct{ id, cwd string }

func (s session) ID() string           { return s.id }
func (s session) Scope() *core.ScopeID { return nil }
func (s session) Cwd() string          { return s.cwd }

// /rewind refuses a path someone else changed since the agent's last
// checkpoint (and says how to force it), restores with force, takes only
// this session's checkpoints, finds a resumed session's workspace by its
// working directory, and names the forms it accepts.
func TestRewindCommandRefusesForcesAndChecksItsArguments(t *testing.T) {
	ctx := context.Background()
	state, ws := t.TempDir(), t.TempDir()
	file := filepath.Join(ws, "a.txt")
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("one\n")
	tk := NewTaker(state, checkpoints.Limits{}, nil)
	tk.Take(ctx, ws, checkpoints.Meta{Session: "s1", Prompt: "change it", Reason: ReasonPrompt})
	write("two\n") // the agent
	tk.Take(ctx, ws, checkpoints.Meta{Session: "s1", Reason: ReasonTurnEnd})
	write("three\n") // someone else

	fresh := NewTaker(state, checkpoints.Limits{}, nil) // a new process: the session resumed
	inv := func(args string) (commands.Reply, error) {
		return fresh.rewind(ctx, commands.Invocation{Args: args, Session: session{"s1", ws}})
	}
	rep, err := inv("")
	if err != nil || !strings.Contains(rep.Text, "| 1 |") || !strings.Contains(rep.Text, "change it") {
		t.Fatalf("/rewind: %v\n%s", err, rep.Text)
	}
	if rep, err = inv("1"); err != nil || !strings.Contains(rep.Text, "**refused**") || !strings.Contains(rep.Text, "-three") || !strings.Contains(rep.Text, "+one") {
		t.Fatalf("/rewind 1: %v\n%s", err, rep.Text)
	}
	if rep, err = inv("1 code"); err != nil || !strings.Contains(rep.Text, "**Nothing was restored**") || !strings.Contains(rep.Text, "/rewind 1 code force") {
		t.Fatalf("/rewind 1 code: %v\n%s", err, rep.Text)
	}
	if b, _ := os.ReadFile(file); string(b) != "three\n" {
		t.Fatalf("a refused rewind changed the file: %q", b)
	}
	if rep, err = inv("1 code force"); err != nil || !strings.Contains(rep.Text, "restored 1 path(s) to checkpoint 1") {
		t.Fatalf("/rewind 1 code force: %v\n%s", err, rep.Text)
	}
	if b, _ := os.ReadFile(file); string(b) != "one\n" {
		t.Fatalf("after the forced rewind: %q", b)
	}
	if _, err := fresh.rewind(ctx, commands.Invocation{Args: "1", Session: session{"s2", ws}}); err == nil || !strings.Contains(err.Error(), "no checkpoint 1 of this session") {
		t.Fatalf("another session's checkpoint: %v", err)
	}
	for _, bad := range []string{"x", "0", "1 files", "1 code now", "1 code force more", "1 conversation force"} {
		if _, err := inv(bad); err == nil || !strings.Contains(err.Error(), "/rewind N code|conversation|both [force]") {
			t.Errorf("/rewind %s: %v", bad, err)
		}
	}
}

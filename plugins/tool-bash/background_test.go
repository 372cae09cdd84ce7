package toolbash

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A run_in_background call that no plugin took over fails with a message
// naming tool-terminal, and runs nothing; timeoutMs does not go with it; a
// background value renders as its shell id and note.
func TestBackgroundWithoutTerminalPlugin(t *testing.T) {
	t.Parallel()
	x := newExecutor(t)
	if _, err := x.Run(context.Background(), Args{Command: "touch ran", RunInBackground: true}); !errors.Is(err, ErrNoBackground) || !strings.Contains(err.Error(), "tool-terminal") {
		t.Fatalf("err %v, want ErrNoBackground", err)
	}
	ms := 1000.0
	if err := (Args{Command: "sleep 1", RunInBackground: true, TimeoutMs: &ms}).Validate(); err == nil || !strings.Contains(err.Error(), "timeoutMs") {
		t.Fatalf("timeoutMs with run_in_background: %v", err)
	}
	got := Render(Value{Kind: KindBackground, ShellID: "shell-3", Note: "Read it with bash_output."})
	if got != "[started in the background as shell shell-3]\nRead it with bash_output." {
		t.Fatalf("render %q", got)
	}
}

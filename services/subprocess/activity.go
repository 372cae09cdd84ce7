//go:build unix

package subprocess

import (
	"context"
	"os"
	"path/filepath"
	"strings"
)

// InspectActivity classifies the terminal (reference A11, simplified):
// after the session ended: idle; a foreground group other than the shell:
// busy; the shell in the foreground: the shell integration's last record
// (idle at a prompt, busy after a command started) when TerminalSpec.
// ShellActivity applied, else unknown. A Write or SignalForeground makes it
// unknown until the shell writes a new record. Never fails except for ctx.
func (t *Terminal) InspectActivity(ctx context.Context) (Activity, error) {
	if err := context.Cause(ctx); err != nil {
		return Activity{}, err
	}
	state, rec := t.observe()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.invalidated && state != ActivityIdle {
		if rec == t.lastHook {
			state = ActivityUnknown
		} else {
			t.invalidated = false
		}
	}
	if state != t.lastState || rec != t.lastHook {
		t.revision++
	}
	if !t.invalidated {
		t.lastHook = rec
	}
	t.lastState = state
	return Activity{State: state, Revision: t.revision}, nil
}

// observe returns the raw state and the current hook record.
func (t *Terminal) observe() (ActivityState, string) {
	rec := t.hooks.record()
	t.mu.Lock()
	ended := t.termDone
	t.mu.Unlock()
	if ended {
		return ActivityIdle, rec
	}
	if t.hasExited() {
		alive, err := t.rng.alive()
		switch {
		case err != nil:
			return ActivityUnknown, rec
		case alive:
			return ActivityBusy, rec
		}
		return ActivityIdle, rec
	}
	pgid, err := t.foregroundPgid()
	switch {
	case err != nil:
		return ActivityUnknown, rec
	case pgid != t.pid:
		return ActivityBusy, rec
	case t.hooks == nil || rec == "":
		return ActivityUnknown, rec
	}
	parts := strings.Split(rec, ":")
	switch parts[len(parts)-1] {
	case "idle":
		return ActivityIdle, rec
	case "busy":
		return ActivityBusy, rec
	}
	return ActivityUnknown, rec
}

func (t *Terminal) invalidate() {
	rec := t.hooks.record()
	t.mu.Lock()
	t.invalidated = true
	t.lastHook = rec
	t.lastState = ActivityUnknown
	t.revision++
	t.mu.Unlock()
}

func isInteractiveBash(argv []string) bool {
	return len(argv) == 2 && filepath.Base(argv[0]) == "bash" && argv[1] == "-i"
}

// shellHooks is the private bash integration of one terminal: an rcfile
// that sources ~/.bashrc and then records "pid:seq:idle" at each prompt
// (PROMPT_COMMAND) and "pid:seq:busy" when a command starts (PS0) into a
// state file. Directory 0700, files 0600, created with O_EXCL.
type shellHooks struct {
	dir, rcfile, state string
}

func newShellHooks() (*shellHooks, error) {
	dir, err := os.MkdirTemp("", "harness-shell-")
	if err != nil {
		return nil, err
	}
	h := &shellHooks{dir: dir, rcfile: filepath.Join(dir, "rc.bash"), state: filepath.Join(dir, "state")}
	q := "'" + strings.ReplaceAll(h.state, "'", `'\''`) + "'"
	rc := `if [ -f ~/.bashrc ]; then . ~/.bashrc; fi
__harness_activity_seq=0
__harness_activity() { printf '%s:%s:%s\n' "$$" "$__harness_activity_seq" "$1" >| ` + q + `; }
__harness_activity_prompt() { __harness_activity_seq=$((__harness_activity_seq+1)); __harness_activity idle; }
PROMPT_COMMAND="__harness_activity_prompt${PROMPT_COMMAND:+;$PROMPT_COMMAND}"
PS0='$(__harness_activity busy)'"${PS0-}"
`
	for _, f := range []struct{ path, body string }{{h.rcfile, rc}, {h.state, ""}} {
		fh, err := os.OpenFile(f.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			_, err = fh.WriteString(f.body)
			err = errorsJoin(err, fh.Close())
		}
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
	return h, nil
}

func errorsJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// record is the last line the shell wrote, or "".
func (h *shellHooks) record() string {
	if h == nil {
		return ""
	}
	b, err := os.ReadFile(h.state)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func (h *shellHooks) remove() {
	if h != nil {
		_ = os.RemoveAll(h.dir)
	}
}

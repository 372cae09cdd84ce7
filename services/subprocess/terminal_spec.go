package subprocess

import (
	"context"
	"errors"
	"strings"
	"time"
)

// ErrTerminalExited is returned by Write, Resize and the inspections once
// the terminal's program has exited ("terminal process has exited").
var ErrTerminalExited = errors.New("terminal process has exited")

// ErrTerminalsUnsupported is SpawnTerminal's error on Windows (never returned elsewhere): terminals
// need a pseudo console (ConPTY), which the PTY library in use does not
// provide there.
var ErrTerminalsUnsupported = errors.New("subprocess: terminals are not supported on Windows yet (no ConPTY support); run commands without a terminal")

// TerminalSpec describes one PTY session. As with Spec, nothing that matters
// has a default.
type TerminalSpec struct {
	// Context cancels allocation only: once SpawnTerminal returned, the
	// terminal owns its lifetime (end it with Terminate).
	Context context.Context
	// Argv is the program (typically a shell) and its arguments.
	Argv []string
	// Dir is the working directory (required).
	Dir string
	// Env and UnsetEnv apply on top of the scrubbed parent environment, as in
	// Spec.
	Env      map[string]string
	UnsetEnv []string
	// TerminalType is advertised as TERM (required, e.g. "xterm-256color" or
	// "dumb").
	TerminalType string
	// Cols and Rows are the initial size in character cells (> 0).
	Cols, Rows int
	// Grace is the SIGTERM→SIGKILL delay of Terminate (0 < Grace ≤ MaxGrace).
	Grace time.Duration
	// ShellActivity opts into shell integration for InspectActivity. It only
	// takes effect when Argv is exactly [<dir>/bash, "-i"] or ["bash", "-i"]:
	// the runtime then starts bash with a private --rcfile that sources
	// ~/.bashrc and records prompt (idle) and command start (busy).
	ShellActivity bool
	// Sandbox is as Spec.Sandbox; the PTY stays the program's controlling
	// terminal inside the sandbox. Terminal.Sandbox reports enforcement.
	Sandbox *SandboxPolicy
}

func (s *TerminalSpec) validate() error {
	if len(s.Argv) == 0 || s.Argv[0] == "" {
		return invalid("subprocess-local: terminal argv must contain a program")
	}
	if err := validateGrace(s.Grace); err != nil {
		return err
	}
	if s.Dir == "" {
		return invalid("dir: working directory is required")
	}
	if s.TerminalType == "" || strings.ContainsAny(s.TerminalType, "=\x00") {
		return invalid("terminalType: required (e.g. xterm-256color), got %q", s.TerminalType)
	}
	if s.Cols <= 0 || s.Rows <= 0 || s.Cols > 0xffff || s.Rows > 0xffff {
		return invalid("cols, rows: must be positive, got %dx%d", s.Cols, s.Rows)
	}
	if err := validateEnv(s.Env, s.UnsetEnv); err != nil {
		return &specError{msg: err.Error()}
	}
	return nil
}

// Foreground describes the PTY's foreground process group.
type Foreground struct {
	// ProcessGroupID is the foreground pgid (the shell's pid while the shell
	// itself is at the prompt).
	ProcessGroupID int
	// Command is the group leader's command line (arguments joined by
	// spaces), or its name when the command line is unreadable.
	Command string
	// InputWaiting is true only when a thread of a process in the group is
	// provably blocked reading fd 0 and fd 0 is this PTY (Linux,
	// /proc/<pid>/task/<tid>/syscall: read, select/pselect, poll/ppoll;
	// epoll waits are not recognised). false means "not proven", not "busy".
	InputWaiting bool
}

// TerminalEnvironment is what a terminal consumer needs to pick a shell.
type TerminalEnvironment struct {
	Platform     string `json:"platform"`               // "posix"
	DefaultShell string `json:"defaultShell,omitempty"` // non-empty $SHELL, else the passwd login shell, else ""
}

// ActivityState is a terminal's activity classification.
type ActivityState string

const (
	// ActivityIdle: the shell waits at its prompt, or the session ended.
	ActivityIdle ActivityState = "idle"
	// ActivityBusy: a command runs (a foreground group other than the shell,
	// or the shell integration recorded a command start).
	ActivityBusy ActivityState = "busy"
	// ActivityUnknown: no evidence (no shell integration, input or a signal
	// since the last record, or the probe failed).
	ActivityUnknown ActivityState = "unknown"
)

// Activity is one InspectActivity observation. Revision is scoped to the
// terminal and changes whenever the observed state or the shell's activity
// record changes, and on every Write or SignalForeground.
type Activity struct {
	State    ActivityState `json:"state"`
	Revision uint64        `json:"revision"`
}

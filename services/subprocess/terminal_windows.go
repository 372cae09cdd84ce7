//go:build windows

package subprocess

import (
	"context"
	"io"
	"os"
)

// Terminal is one program on a PTY. On Windows SpawnTerminal never
// returns one; the methods exist so that callers compile, and each fails
// with ErrTerminalsUnsupported.
type Terminal struct{}

// SpawnTerminal fails on Windows: with the spec's validation error, else
// with ErrTerminalsUnsupported.
func (r *Runtime) SpawnTerminal(spec TerminalSpec) (*Terminal, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	return nil, ErrTerminalsUnsupported
}

// Pid is 0.
func (t *Terminal) Pid() int { return 0 }

// Sandbox reports no sandbox.
func (t *Terminal) Sandbox() SandboxReport { return SandboxReport{} }

// Protected is nil.
func (t *Terminal) Protected() []ProtectedChange { return nil }

// NetworkRefused is nil.
func (t *Terminal) NetworkRefused() []string { return nil }

// Read fails.
func (t *Terminal) Read(context.Context, []byte) (int, error) { return 0, ErrTerminalsUnsupported }

// Output is empty.
func (t *Terminal) Output() io.Reader { return eofReader{} }

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// Done is closed.
func (t *Terminal) Done() <-chan struct{} { c := make(chan struct{}); close(c); return c }

// Wait fails.
func (t *Terminal) Wait(context.Context) (Outcome, error) { return Outcome{}, ErrTerminalsUnsupported }

// Outcome fails.
func (t *Terminal) Outcome() (Outcome, error) { return Outcome{}, ErrTerminalsUnsupported }

// Write fails.
func (t *Terminal) Write(context.Context, string) error { return ErrTerminalsUnsupported }

// Resize fails.
func (t *Terminal) Resize(context.Context, int, int) error { return ErrTerminalsUnsupported }

// InspectForeground fails.
func (t *Terminal) InspectForeground(context.Context) (*Foreground, error) {
	return nil, ErrTerminalsUnsupported
}

// SignalForeground fails.
func (t *Terminal) SignalForeground(context.Context, string) (int, error) {
	return 0, ErrTerminalsUnsupported
}

// Terminate does nothing.
func (t *Terminal) Terminate(context.Context) error { return nil }

// InspectActivity fails.
func (t *Terminal) InspectActivity(context.Context) (Activity, error) {
	return Activity{}, ErrTerminalsUnsupported
}

func (t *Terminal) kill() {}

// TerminalEnvironment reports platform "windows" and the default shell
// $COMSPEC (usually cmd.exe); terminals themselves are not supported yet.
func (r *Runtime) TerminalEnvironment(ctx context.Context) (TerminalEnvironment, error) {
	if err := context.Cause(ctx); err != nil {
		return TerminalEnvironment{}, err
	}
	return TerminalEnvironment{Platform: "windows", DefaultShell: os.Getenv("COMSPEC")}, nil
}

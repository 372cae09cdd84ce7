package subprocess

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// MaxGrace bounds Spec.Grace and TerminalSpec.Grace.
const MaxGrace = 24 * time.Hour

// StdinMode says what a child's fd 0 is. The zero value is invalid: every
// spec states its stdin.
type StdinMode int

const (
	// StdinIgnore connects fd 0 to /dev/null (EOF at once).
	StdinIgnore StdinMode = iota + 1
	// StdinPipe hands the write end to the caller as Handle.Stdin.
	StdinPipe
	// StdinData writes Stdin.Data and closes; write errors such as EPIPE are
	// swallowed (the exit status and output are authoritative).
	StdinData
)

// Stdin is the disposition of a child's standard input.
type Stdin struct {
	Mode StdinMode
	Data []byte // StdinData only
}

// IgnoreStdin is Stdin{Mode: StdinIgnore}.
func IgnoreStdin() Stdin { return Stdin{Mode: StdinIgnore} }

// PipeStdin is Stdin{Mode: StdinPipe}.
func PipeStdin() Stdin { return Stdin{Mode: StdinPipe} }

// DataStdin is Stdin{Mode: StdinData, Data: data}.
func DataStdin(data []byte) Stdin { return Stdin{Mode: StdinData, Data: data} }

// OutputMode says what a child's stdout or stderr is. The zero value is
// invalid.
type OutputMode int

const (
	// OutputPipe hands the raw read end to the caller (Handle.Stdout or
	// Handle.Stderr); nothing is buffered and the caller must drain it.
	OutputPipe OutputMode = iota + 1
	// OutputInherit gives the child this process's own descriptor.
	OutputInherit
	// OutputCollect keeps a bounded tail (and optionally a spill file); see
	// CollectedOutput.
	OutputCollect
)

// Output is the disposition of a child's stdout or stderr.
type Output struct {
	Mode OutputMode
	// MaxBytes bounds the in-memory tail of a collected stream (bytes, > 0).
	MaxBytes int64
	// Spill, when set on a collected stream, keeps the complete stream in a
	// private file until Spill.MaxBytes.
	Spill *Spill
}

// Spill configures the complete-stream file of a collected stream.
type Spill struct {
	// MaxBytes caps the file (bytes, > 0). A stream longer than this has its
	// incomplete file deleted and reports SpillCapped.
	MaxBytes int64
}

// PipeOutput is Output{Mode: OutputPipe}.
func PipeOutput() Output { return Output{Mode: OutputPipe} }

// InheritOutput is Output{Mode: OutputInherit}.
func InheritOutput() Output { return Output{Mode: OutputInherit} }

// Collect keeps the last maxBytes bytes in memory and no file.
func Collect(maxBytes int64) Output { return Output{Mode: OutputCollect, MaxBytes: maxBytes} }

// CollectSpill keeps the last maxBytes bytes in memory and the whole stream,
// up to spillMaxBytes, in a private file.
func CollectSpill(maxBytes, spillMaxBytes int64) Output {
	return Output{Mode: OutputCollect, MaxBytes: maxBytes, Spill: &Spill{MaxBytes: spillMaxBytes}}
}

// Spec fully describes one spawn. Nothing has a default: a zero field that
// matters is a validation error, reported by Spawn before any process starts.
type Spec struct {
	// Context, when set, terminates the process (Handle.Terminate) once done;
	// an already-done context fails Spawn. The caller owns the deadline and
	// its cause (context.WithTimeoutCause).
	Context context.Context
	// Argv is the program and its arguments, never shell-interpreted.
	// Argv[0] is resolved like ResolveExecutable against the child env.
	Argv []string
	// Dir is the child's working directory (required).
	Dir string
	// Env entries are set on top of the scrubbed parent environment; an
	// explicit entry always survives, credential-shaped or HARNESS_* alike.
	Env map[string]string
	// UnsetEnv removes names after Env is applied (tombstones).
	UnsetEnv []string
	Stdin    Stdin
	Stdout   Output
	Stderr   Output
	// Grace is both the SIGTERM→SIGKILL delay of Terminate and the time
	// pipes held by escaped descendants may keep Done open after the direct
	// child exits (0 < Grace ≤ MaxGrace).
	Grace time.Duration
	// Control requests a separate byte duplex to the child: a socketpair
	// whose child end is fd 3 (other inherited descriptors stay closed) and
	// whose parent end is Handle.Control. The child also gets
	// HARNESS_SUBPROCESS_CONTROL=3.
	Control bool
	// Started, when set, is called by Run once the child has started and
	// before Run waits for it, with the collected streams (nil for a stream
	// not in collect mode). They are safe to read (ReadFrom, Total) while
	// the child writes, so a caller can watch the output as it arrives.
	// It runs on Run's goroutine: anything that waits belongs in a
	// goroutine of its own, which the caller ends after Run returns. Spawn
	// does not call it (Handle.Collected gives the same streams).
	Started func(Collected)
	// Sandbox, when non-nil with mode read-only or workspace-write, runs
	// the child confined by the runtime's sandbox backend, Dir being the
	// workspace; Handle.Sandbox reports what is enforced. Spawn fails
	// (ErrSandboxUnavailable) rather than run it unsandboxed when no
	// backend works. nil or mode off: not sandboxed.
	Sandbox *SandboxPolicy
}

// ErrInvalidSpec is wrapped by every validation error of Spec and
// TerminalSpec.
var ErrInvalidSpec = errors.New("invalid spawn spec")

type specError struct{ msg string }

func (e *specError) Error() string        { return e.msg }
func (e *specError) Is(target error) bool { return target == ErrInvalidSpec }

func invalid(format string, args ...any) error {
	return &specError{msg: fmt.Sprintf(format, args...)}
}

func validateGrace(g time.Duration) error {
	if g <= 0 || g > MaxGrace {
		return invalid("grace: must be positive and at most %s, got %s", MaxGrace, g)
	}
	return nil
}

func validateArgv(argv []string) error {
	if len(argv) == 0 || argv[0] == "" {
		return invalid("invalid argv: expected a non-empty program name at argv[0]")
	}
	for i, a := range argv {
		if strings.IndexByte(a, 0) >= 0 {
			return invalid("invalid argv[%d]: contains a NUL byte, which no program argument can carry", i)
		}
	}
	return nil
}

func validateOutput(field string, o Output) error {
	switch o.Mode {
	case OutputPipe, OutputInherit:
		if o.MaxBytes != 0 || o.Spill != nil {
			return invalid("%s: maxBytes and spill apply to collect mode only", field)
		}
	case OutputCollect:
		if o.MaxBytes <= 0 {
			return invalid("%s.maxBytes: must be positive, got %d", field, o.MaxBytes)
		}
		if o.Spill != nil && o.Spill.MaxBytes <= 0 {
			return invalid("%s.spill.maxBytes: must be positive, got %d", field, o.Spill.MaxBytes)
		}
	default:
		return invalid("%s: mode is required (pipe, inherit or collect)", field)
	}
	return nil
}

func (s *Spec) validate() error {
	if err := validateGrace(s.Grace); err != nil {
		return err
	}
	if err := validateArgv(s.Argv); err != nil {
		return err
	}
	if s.Dir == "" {
		return invalid("dir: working directory is required")
	}
	if strings.IndexByte(s.Dir, 0) >= 0 {
		return invalid("dir: contains a NUL byte")
	}
	switch s.Stdin.Mode {
	case StdinIgnore, StdinPipe:
		if s.Stdin.Data != nil {
			return invalid("stdin.data: only valid in data mode")
		}
	case StdinData:
	default:
		return invalid("stdin: mode is required (ignore, pipe or data)")
	}
	if err := validateOutput("stdout", s.Stdout); err != nil {
		return err
	}
	if err := validateOutput("stderr", s.Stderr); err != nil {
		return err
	}
	if err := validateEnv(s.Env, s.UnsetEnv); err != nil {
		return &specError{msg: err.Error()}
	}
	return nil
}

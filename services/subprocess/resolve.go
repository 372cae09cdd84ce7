package subprocess

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrExecutableNotFound is the sentinel behind every *ExecutableNotFoundError:
// a lookup that completed without a hit. Consumers test it with errors.Is to
// skip a candidate (a shell that is not installed, say).
var ErrExecutableNotFound = errors.New("executable not found")

// ErrRelativeCommand is returned (wrapped) for a command that is a relative
// path with a separator, such as "./bin/tool". It is a validation error,
// distinct from ErrExecutableNotFound.
var ErrRelativeCommand = errors.New("relative command path")

// ExecutableNotFoundError reports that Command did not resolve: an absolute
// path that is not a regular executable file, or a bare name missing from
// PATH. It matches ErrExecutableNotFound under errors.Is.
type ExecutableNotFoundError struct {
	Command string // the command as given
	OnPath  bool   // true for a bare-name PATH miss, false for an absolute path
}

// Error returns the dsh message for the miss.
func (e *ExecutableNotFoundError) Error() string {
	if e.OnPath {
		return fmt.Sprintf("subprocess-local: command %q was not found on PATH", e.Command)
	}
	return fmt.Sprintf("subprocess-local: command %q is not an executable file", e.Command)
}

// Is makes errors.Is(err, ErrExecutableNotFound) true.
func (e *ExecutableNotFoundError) Is(target error) bool { return target == ErrExecutableNotFound }

// ResolveExecutable returns the absolute path a spawn of command would run
// (dsh resolveExecutable, reference A1):
//   - "" fails; a relative path containing '/' fails with ErrRelativeCommand;
//   - an absolute path must be a regular file with execute permission;
//   - a bare name is looked up on PATH taken from the scrubbed parent
//     environment merged with env (so env["PATH"] overrides), relative PATH
//     entries resolving against the host's working directory; the first
//     regular executable wins and the joined path is returned, not realpath'd.
//
// A miss is an *ExecutableNotFoundError. ctx is checked before and after each
// candidate; cancellation returns context.Cause(ctx).
func (r *Runtime) ResolveExecutable(ctx context.Context, command string, env map[string]string) (string, error) {
	if err := validateEnv(env, nil); err != nil {
		return "", err
	}
	return resolveExecutable(ctx, command, r.childEnv(env, nil))
}

func resolveExecutable(ctx context.Context, command string, env []string) (string, error) {
	if command == "" {
		return "", errors.New("subprocess-local: executable must be non-empty")
	}
	if err := context.Cause(ctx); err != nil {
		return "", err
	}
	if filepath.IsAbs(command) {
		p, ok := executableFile(command)
		if !ok {
			return "", &ExecutableNotFoundError{Command: command}
		}
		return p, context.Cause(ctx)
	}
	if strings.ContainsAny(command, pathSeparators) {
		return "", relativeCommandError(command)
	}
	pathVar, _ := lookupEnv(env, "PATH")
	hostCwd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("subprocess-local: host working directory: %w", err)
	}
	if pathVar != "" {
		for _, dir := range filepath.SplitList(pathVar) {
			if err := context.Cause(ctx); err != nil {
				return "", err
			}
			if dir == "" {
				dir = "."
			}
			cand := filepath.Join(dir, command)
			if !filepath.IsAbs(cand) {
				cand = filepath.Join(hostCwd, cand)
			}
			if p, ok := executableFile(cand); ok {
				return p, context.Cause(ctx)
			}
		}
	}
	return "", &ExecutableNotFoundError{Command: command, OnPath: true}
}

type relativeCommandError string

func (e relativeCommandError) Error() string {
	return fmt.Sprintf("subprocess-local: command %q is a relative path; use an absolute path or a bare PATH name", string(e))
}

func (e relativeCommandError) Is(target error) bool { return target == ErrRelativeCommand }

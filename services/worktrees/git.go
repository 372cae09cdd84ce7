package worktrees

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// maxGitOutput bounds what one git command's stdout may hold in memory;
// past it the output is cut (a summary of a huge diff lists the first
// files, not all).
const maxGitOutput = 4 << 20

// capped is a writer that keeps the first max bytes and drops the rest.
type capped struct {
	buf bytes.Buffer
	max int
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); room < len(p) {
		c.cut = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return c.buf.Write(p)
}

// git runs git -C dir args on the host (not sandboxed: this is the
// harness acting) and returns its stdout. A failure's error names the
// command and carries git's message.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	if ctx == nil {
		return "", errors.New("worktrees: nil context")
	}
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C", "GIT_OPTIONAL_LOCKS=0")
	out := &capped{max: maxGitOutput}
	errb := &capped{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = out, errb
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), ctx.Err())
		}
		msg := strings.TrimSpace(errb.buf.String())
		if msg == "" {
			msg = err.Error()
		}
		return out.buf.String(), &GitError{Args: args, Dir: dir, Msg: msg, Err: err}
	}
	return out.buf.String(), nil
}

// GitError is a git command that failed: its arguments, directory and
// message (git's stderr).
type GitError struct {
	// Args are git's arguments after -C Dir.
	Args []string
	// Dir is the directory git ran in.
	Dir string
	// Msg is git's stderr (at most 64 KiB), trimmed.
	Msg string
	// Err is the exec error (an *exec.ExitError for a non-zero exit).
	Err error
}

func (e *GitError) Error() string {
	return fmt.Sprintf("git %s (in %s): %s", strings.Join(e.Args, " "), e.Dir, e.Msg)
}

// Unwrap returns the exec error.
func (e *GitError) Unwrap() error { return e.Err }

// lines splits git's output into its non-empty lines.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimRight(l, "\r"); l != "" {
			out = append(out, l)
		}
	}
	return out
}

package approval

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/dshgo/harness/services/tools"
)

// TTY is the terminal a prompt talks to. *os.File opened on a terminal device
// satisfies it; SetReadDeadline is how a pending read is cancelled.
type TTY interface {
	io.ReadWriteCloser
	SetReadDeadline(t time.Time) error
}

// Terminal is the interactive Answerer: it writes the question to a terminal
// and reads one line. Questions are serialized; each opens the terminal anew
// and closes it before Answer returns, so nothing keeps reading afterwards.
type Terminal struct {
	open func() (TTY, error)
	turn chan struct{} // one question at a time
}

// NewTerminal returns a terminal answerer using open (OpenTTY in production).
func NewTerminal(open func() (TTY, error)) *Terminal {
	return &Terminal{open: open, turn: make(chan struct{}, 1)}
}

// maxShownArgs bounds the argument text shown in a prompt (bytes).
const maxShownArgs = 2000

// Answer asks: y/yes = allowed-once, a/always = allowed-always, n/no/empty =
// rejected; end of input or ctx ending = cancelled. Any other answer asks again.
func (t *Terminal) Answer(ctx context.Context, req tools.ApprovalRequest) (tools.ApprovalOutcome, error) {
	select {
	case t.turn <- struct{}{}:
		defer func() { <-t.turn }()
	case <-ctx.Done():
		return tools.ApprovalCancelled, nil
	}
	tty, err := t.open()
	if err != nil {
		return tools.ApprovalUnavailable, fmt.Errorf("approval: open terminal: %w", err)
	}
	defer tty.Close()
	stop := context.AfterFunc(ctx, func() { _ = tty.SetReadDeadline(time.Now()) })
	defer stop()

	if _, err := io.WriteString(tty, question(req)); err != nil {
		return tools.ApprovalUnavailable, fmt.Errorf("approval: write prompt: %w", err)
	}
	lines := bufio.NewReader(tty)
	for {
		line, err := lines.ReadString('\n')
		if err != nil && line == "" {
			if ctx.Err() != nil || errors.Is(err, io.EOF) || errors.Is(err, os.ErrDeadlineExceeded) {
				_, _ = io.WriteString(tty, "\n(cancelled)\n")
				return tools.ApprovalCancelled, nil
			}
			return tools.ApprovalUnavailable, fmt.Errorf("approval: read answer: %w", err)
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return tools.ApprovalAllowedOnce, nil
		case "a", "always":
			return tools.ApprovalAllowedAlways, nil
		case "", "n", "no":
			return tools.ApprovalRejected, nil
		}
		if _, err := io.WriteString(tty, "Please answer y, a or n: "); err != nil {
			return tools.ApprovalUnavailable, fmt.Errorf("approval: write prompt: %w", err)
		}
	}
}

// question renders the prompt for req.
func question(req tools.ApprovalRequest) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n-- approval needed: tool %s --\n", visible(req.Tool))
	args := req.Arguments
	if len(args) > maxShownArgs {
		args = args[:maxShownArgs] + "…"
	}
	fmt.Fprintf(&b, "arguments: %s\n", visible(args))
	reason := req.DisplayReason
	if reason == "" {
		reason = req.Reason
	}
	if reason != "" {
		fmt.Fprintf(&b, "why: %s\n", visible(reason))
	}
	if len(req.AlwaysRules) > 0 {
		fmt.Fprintf(&b, "always adds: %s\n", visible(strings.Join(req.AlwaysRules, ", ")))
	}
	if l := req.Labels; l != nil {
		fmt.Fprintf(&b, "%s [y] %s  [a] %s  [n] %s (default): ", visible(cmp.Or(l.Title, "Allow?")),
			visible(cmp.Or(l.Once, "yes, once")), visible(cmp.Or(l.Always, "always, this session")), visible(cmp.Or(l.No, "no")))
		return b.String()
	}
	b.WriteString("Allow? [y] yes, once  [a] always, this session  [n] no (default): ")
	return b.String()
}

// visible escapes control characters (ANSI sequences, carriage returns, …)
// so that text from the model cannot redraw the terminal.
func visible(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == utf8RuneError:
			b.WriteString(`\ufffd`)
		case unicode.IsControl(r) || r == 0x2028 || r == 0x2029 || unicode.Is(unicode.Bidi_Control, r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

const utf8RuneError = '\uFFFD'

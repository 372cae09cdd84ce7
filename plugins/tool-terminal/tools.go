package toolterminal

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/tools"
)

// OutputArgs are bash_output's arguments.
type OutputArgs struct {
	ShellID string `json:"shell_id" jsonschema_description:"The id a bash call with run_in_background returned (shell-1)."`
	// WaitMs waits for the shell to exit before reading, at most this long.
	WaitMs *int64 `json:"wait_ms,omitempty" jsonschema:"minimum=0" jsonschema_description:"Wait up to this many milliseconds for the shell to exit before reading (default 0: read at once; at most 600000). A shell that exits sooner returns sooner."`
}

// KillArgs are kill_shell's arguments.
type KillArgs struct {
	ShellID string `json:"shell_id" jsonschema_description:"The background shell to stop."`
}

// WriteArgs are write_stdin's arguments.
type WriteArgs struct {
	ShellID string `json:"shell_id" jsonschema_description:"The background shell whose standard input gets the text."`
	Input   string `json:"input" jsonschema_description:"The text to write, exactly (end a line with \\n)."`
	// CloseStdin closes the shell's standard input after the write (EOF).
	CloseStdin bool `json:"close_stdin,omitempty" jsonschema_description:"Close standard input after writing (the program then reads end of file)."`
	// WaitMs waits, then reads what the shell printed (as bash_output).
	WaitMs *int64 `json:"wait_ms,omitempty" jsonschema:"minimum=0" jsonschema_description:"Then wait up to this many milliseconds (default 500, at most 600000; the wait ends early if the shell exits) and return what it printed."`
}

// OutputValue is what bash_output (and write_stdin, kill_shell) return: the
// output that arrived since the previous read and the shell's status.
type OutputValue struct {
	// ShellID and Command name the shell.
	ShellID string `json:"shellId"`
	Command string `json:"command"`
	// Status is running, exited or killed.
	Status string `json:"status"`
	// ExitCode and Signal say how the shell's bash ended (once not running).
	ExitCode *int   `json:"exitCode,omitempty"`
	Signal   string `json:"signal,omitempty"`
	// Stdout and Stderr are the new text of each stream.
	Stdout StreamRead `json:"stdout"`
	Stderr StreamRead `json:"stderr"`
	// Protected and NetworkRefused are the sandbox's notices (once ended).
	Protected      []string `json:"protected,omitempty"`
	NetworkRefused []string `json:"networkRefused,omitempty"`
	// Wrote is how many bytes write_stdin wrote; StdinClosed that it
	// closed standard input.
	Wrote       int  `json:"wrote,omitempty"`
	StdinClosed bool `json:"stdinClosed,omitempty"`
}

// StreamRead is the new part of one stream.
type StreamRead struct {
	// Text is what arrived since the previous read (that memory still holds).
	Text string `json:"text"`
	// Dropped is how many bytes arrived since the previous read but left
	// the in-memory tail before this read.
	Dropped int64 `json:"dropped,omitempty"`
	// SpillPath holds the complete stream while it fits its cap.
	SpillPath string `json:"spillPath,omitempty"`
	// SpillCapped reports that the stream outgrew its spill cap.
	SpillCapped bool `json:"spillCapped,omitempty"`
}

// read returns what arrived since the previous read and advances the
// cursors, with the status as of now.
func (s *shell) read() OutputValue {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := OutputValue{ShellID: s.id, Command: s.command, Status: s.status}
	c := s.h.Collected()
	v.Stdout, s.readOut = readStream(c.Stdout, s.readOut)
	v.Stderr, s.readErr = readStream(c.Stderr, s.readErr)
	if s.status != StatusRunning {
		v.ExitCode, v.Signal = s.outcome.ExitCode, s.outcome.Signal
		v.Protected, v.NetworkRefused = s.protected, s.refused
		s.notified = true
	}
	return v
}

func readStream(c *subprocess.CollectedOutput, from int64) (StreamRead, int64) {
	if c == nil {
		return StreamRead{}, from
	}
	r := c.ReadFrom(from)
	out := StreamRead{Text: r.Text, SpillPath: r.SpillPath, SpillCapped: c.SpillCapped()}
	if r.Lossy {
		out.Dropped = max(0, r.NextOffset-int64(len(r.Text))-from)
	}
	return out, r.NextOffset
}

// wait blocks until the shell is gone, d passed or ctx ended.
func (s *shell) wait(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.gone:
	case <-t.C:
	case <-ctx.Done():
	}
}

// waitFor is the wait of wait_ms (nil: def), capped by the config.
func (m *manager) waitFor(ms *int64, def time.Duration) time.Duration {
	d := def
	if ms != nil {
		d = time.Duration(*ms) * time.Millisecond
	}
	return min(d, m.cfg.MaxWait.D())
}

// outputTool is bash_output.
func (m *manager) outputTool() *tools.Tool {
	return tools.Define("bash_output", strings.TrimSpace(outputDescription),
		func(ctx context.Context, e *tools.Execution, a OutputArgs) (OutputValue, error) {
			s, err := m.get(e.Scope(), a.ShellID)
			if err != nil {
				return OutputValue{}, err
			}
			s.wait(ctx, m.waitFor(a.WaitMs, 0))
			return s.read(), nil
		},
		tools.WithReadOnly(),
		tools.WithConcurrencySafe(func(OutputArgs) bool { return true }),
		tools.WithRender(func(_ OutputArgs, v OutputValue) []tools.Content { return []tools.Content{tools.Text(Render(v))} }),
		tools.WithPresent(presentOutput[OutputArgs]))
}

// killTool is kill_shell.
func (m *manager) killTool() *tools.Tool {
	return tools.Define("kill_shell", strings.TrimSpace(killDescription),
		func(ctx context.Context, e *tools.Execution, a KillArgs) (OutputValue, error) {
			s, err := m.get(e.Scope(), a.ShellID)
			if err != nil {
				return OutputValue{}, err
			}
			if err := m.kill(ctx, s); err != nil {
				return OutputValue{}, fmt.Errorf("shell %s: %w", s.id, err)
			}
			return s.read(), nil
		},
		// It stops only a process the agent itself started (after that
		// call's own permission check).
		tools.WithInternal(),
		tools.WithRender(func(_ KillArgs, v OutputValue) []tools.Content { return []tools.Content{tools.Text(Render(v))} }),
		tools.WithPresent(presentOutput[KillArgs]))
}

// writeTool is write_stdin.
func (m *manager) writeTool() *tools.Tool {
	return tools.Define("write_stdin", strings.TrimSpace(writeDescription),
		func(ctx context.Context, e *tools.Execution, a WriteArgs) (OutputValue, error) {
			s, err := m.get(e.Scope(), a.ShellID)
			if err != nil {
				return OutputValue{}, err
			}
			n, err := s.write(a.Input, a.CloseStdin, m.cfg.Grace.D())
			if err != nil {
				return OutputValue{}, err
			}
			s.wait(ctx, m.waitFor(a.WaitMs, 500*time.Millisecond))
			v := s.read()
			v.Wrote, v.StdinClosed = n, a.CloseStdin
			return v, nil
		},
		tools.WithRender(func(_ WriteArgs, v OutputValue) []tools.Content { return []tools.Content{tools.Text(Render(v))} }),
		tools.WithPresent(presentOutput[WriteArgs]))
}

// errStdinClosed is write_stdin's error once standard input is closed.
var errStdinClosed = errors.New("standard input is closed (close_stdin, or the shell ended)")

// write writes input to the shell's stdin, giving up after timeout when
// the program does not read, and closes it when asked.
func (s *shell) write(input string, closeIt bool, timeout time.Duration) (int, error) {
	s.mu.Lock()
	w := s.stdin
	if closeIt {
		s.stdin = nil
	}
	s.mu.Unlock()
	if w == nil {
		return 0, fmt.Errorf("shell %s: %w", s.id, errStdinClosed)
	}
	if d, ok := w.(interface{ SetWriteDeadline(time.Time) error }); ok {
		_ = d.SetWriteDeadline(time.Now().Add(timeout))
	}
	n, err := w.Write([]byte(input))
	if closeIt {
		_ = w.Close()
	}
	if err != nil {
		return n, fmt.Errorf("shell %s: writing standard input: %w (wrote %d of %d bytes)", s.id, err, n, len(input))
	}
	return n, nil
}

// Render is the model-facing text of a bash_output, kill_shell or
// write_stdin result: the new stdout, a "[stderr]" block with the new
// stderr, "(no new output)" when both are empty, then on their own lines
// a note for output that left memory unread, the sandbox's notices, and
// last "[shell ID: running]", "[shell ID: exited with code N]" or
// "[shell ID: killed (signal SIGTERM)]".
func Render(v OutputValue) string {
	var b strings.Builder
	var notes []string
	for _, st := range []struct {
		label string
		r     StreamRead
	}{{"stdout", v.Stdout}, {"stderr", v.Stderr}} {
		if st.r.Dropped > 0 {
			n := "[" + strconv.FormatInt(st.r.Dropped, 10) + " bytes of " + st.label + " left memory before this read"
			switch {
			case st.r.SpillPath != "":
				n += "; the full output is in " + st.r.SpillPath + " (read it with offset/limit)]"
			case st.r.SpillCapped:
				n += "; the output exceeded the spill cap and was not saved]"
			default:
				n += "]"
			}
			notes = append(notes, n)
		}
	}
	if v.Wrote > 0 || v.StdinClosed {
		w := "[wrote " + strconv.Itoa(v.Wrote) + " bytes to standard input"
		if v.StdinClosed {
			w += " and closed it"
		}
		notes = append(notes, w+"]")
	}
	b.WriteString(v.Stdout.Text)
	if v.Stderr.Text != "" {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString("[stderr]\n" + v.Stderr.Text)
	}
	if b.Len() == 0 {
		b.WriteString("(no new output)")
	}
	for _, p := range v.Protected {
		notes = append(notes, "["+p+"]")
	}
	for _, p := range v.NetworkRefused {
		notes = append(notes, "["+p+"]")
	}
	notes = append(notes, "[shell "+v.ShellID+": "+statusText(v)+"]")
	if !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	b.WriteString(strings.Join(notes, "\n"))
	return b.String()
}

// statusText is "running", "exited with code 0", "killed (signal SIGTERM)".
func statusText(v OutputValue) string {
	switch {
	case v.Status == StatusRunning:
		return "running"
	case v.Status == StatusKilled && v.Signal != "":
		return "killed (signal " + v.Signal + ")"
	case v.Status == StatusKilled && v.ExitCode != nil:
		return "killed (it exited with code " + strconv.Itoa(*v.ExitCode) + ")"
	case v.ExitCode != nil:
		return "exited with code " + strconv.Itoa(*v.ExitCode)
	default:
		return "exited by signal " + v.Signal
	}
}

// shellArgs are the arguments of the three tools: each names a shell.
type shellArgs interface{ shell() string }

func (a OutputArgs) shell() string { return a.ShellID }
func (a KillArgs) shell() string   { return a.ShellID }
func (a WriteArgs) shell() string  { return a.ShellID }

// presentOutput is how the three tools look: kind execute, titled with the
// shell's id and command; done, the new output as terminal content (its
// exit once it ended) and the status as the summary.
func presentOutput[A shellArgs](in tools.PresentInput[A, OutputValue]) tools.Presentation {
	p := tools.Presentation{Kind: tools.KindExecute, Title: in.Args.shell()}
	if !in.Succeeded() {
		return p
	}
	v := in.Out
	p.Title = v.ShellID + ": " + oneLine(v.Command)
	out := v.Stdout.Text
	if v.Stderr.Text != "" {
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		out += v.Stderr.Text
	}
	p.Content = []tools.ToolCallContent{tools.TerminalContent(in.ID, out, v.ExitCode, v.Signal)}
	p.Summarize(statusText(v))
	return p
}

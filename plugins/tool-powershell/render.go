package toolpowershell

import (
	"strconv"
	"strings"

	"github.com/dshgo/harness/services/subprocess"
)

// Stream is one collected output stream.
type Stream struct {
	// Text is the whole stream, or its tail when Truncated.
	Text string `json:"text"`
	// Truncated reports that the start of the stream is not in Text.
	Truncated bool `json:"truncated"`
	// SpillPath is the private file holding the complete stream, when one
	// exists.
	SpillPath string `json:"spillPath,omitempty"`
}

// Value is the result of one call.
type Value struct {
	// ExitCode is the exit status, or null when a signal ended the shell
	// (never on Windows).
	ExitCode *int `json:"exitCode"`
	// Signal names the terminating signal, or "".
	Signal string `json:"signal,omitempty"`
	// TimedOut reports that the call's own deadline fired.
	TimedOut bool `json:"timedOut"`
	// Aborted reports that the caller cancelled the run.
	Aborted bool `json:"aborted"`
	// TimeoutMs is the effective deadline, in milliseconds.
	TimeoutMs int64 `json:"timeoutMs"`
	// Stdout and Stderr are the collected streams.
	Stdout Stream `json:"stdout"`
	Stderr Stream `json:"stderr"`
	// Sandbox is what the OS sandbox enforced (backend "none" on Windows).
	Sandbox *subprocess.SandboxReport `json:"sandbox,omitempty"`
}

// streamOf reads a collected stream: its retained text and spill file.
func streamOf(c *subprocess.CollectedOutput) Stream {
	if c == nil {
		return Stream{}
	}
	r := c.ReadFrom(0)
	return Stream{Text: r.Text, Truncated: r.Lossy, SpillPath: r.SpillPath}
}

// Render is the model-facing text of v: stdout, a [stderr] block, or
// "(no output)", then the markers of how the script ended.
func Render(v Value) string {
	var b strings.Builder
	writeStream(&b, v.Stdout)
	if v.Stderr.Text != "" || v.Stderr.Truncated {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString("[stderr]\n")
		writeStream(&b, v.Stderr)
	}
	if b.Len() == 0 {
		b.WriteString("(no output)")
	}
	mark := func(s string) {
		if !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(s)
	}
	if v.TimedOut {
		mark("[timed out after " + strconv.FormatInt(v.TimeoutMs, 10) + "ms]")
	}
	if v.Aborted {
		mark("[aborted]")
	}
	switch {
	case v.Signal != "":
		mark("[killed by signal: " + v.Signal + "]")
	case v.ExitCode != nil && *v.ExitCode != 0:
		mark("[exit code: " + strconv.Itoa(*v.ExitCode) + "]")
	}
	return b.String()
}

func writeStream(b *strings.Builder, s Stream) {
	b.WriteString(s.Text)
	if s.Truncated {
		if s.Text != "" && !strings.HasSuffix(s.Text, "\n") {
			b.WriteByte('\n')
		}
		if s.SpillPath != "" {
			b.WriteString("[output truncated; full output: " + s.SpillPath + "]\n")
		} else {
			b.WriteString("[output truncated]\n")
		}
	}
}

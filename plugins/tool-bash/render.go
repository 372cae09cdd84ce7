package toolbash

import (
	"strconv"
	"strings"
)

// Stream is one collected output stream of a foreground run.
type Stream struct {
	// Text is the retained text: the whole stream, or its tail when Truncated.
	Text string `json:"text"`
	// Truncated reports that the head of the stream was dropped from memory.
	Truncated bool `json:"truncated"`
	// SpillPath is the private file holding the complete stream, when one exists.
	SpillPath string `json:"spillPath,omitempty"`
	// OmittedBytes is how many leading bytes of the stream Text leaves out.
	OmittedBytes int64 `json:"omittedBytes,omitempty"`
	// OmittedLines is how many leading lines Text leaves out, when known
	// (counted from the spill file); -1 when unknown.
	OmittedLines int64 `json:"omittedLines,omitempty"`
}

// Value is the canonical value of the bash tool (dsh `{kind:'foreground', …}`).
type Value struct {
	// Kind is always "foreground" (background jobs are not supported yet).
	Kind string `json:"kind"`
	// ExitCode is the exit status, or null when a signal ended the shell.
	ExitCode *int `json:"exitCode"`
	// Signal names the terminating signal ("SIGKILL"), or null.
	Signal *string `json:"signal"`
	// TimedOut reports that the call's own deadline fired.
	TimedOut bool `json:"timedOut"`
	// Aborted reports that the caller cancelled the run (not the deadline).
	Aborted bool `json:"aborted"`
	// TimeoutMs is the effective deadline, in milliseconds.
	TimeoutMs int64 `json:"timeoutMs"`
	// Stdout is the collected standard output.
	Stdout Stream `json:"stdout"`
	// Stderr is the collected standard error.
	Stderr Stream `json:"stderr"`
}

// renderStream is a stream's text with, when truncated, a leading note of what
// was left out and the B1 marker "[output truncated; full output: <path>]".
func renderStream(s Stream) string {
	if !s.Truncated {
		return s.Text
	}
	var b strings.Builder
	b.WriteString("[… ")
	b.WriteString(strconv.FormatInt(s.OmittedBytes, 10))
	b.WriteString(" earlier bytes")
	if s.OmittedLines >= 0 {
		b.WriteString(" (")
		b.WriteString(strconv.FormatInt(s.OmittedLines, 10))
		b.WriteString(" lines)")
	}
	b.WriteString(" omitted …]\n")
	b.WriteString(s.Text)
	b.WriteString("\n[output truncated; full output: ")
	if s.SpillPath != "" {
		b.WriteString(s.SpillPath)
	} else {
		b.WriteString("(unavailable)")
	}
	b.WriteString("]")
	return b.String()
}

// Render is the model-facing text of a bash result (B1, exact assembly):
// stdout (with its truncation marker); then, if stderr is non-empty, a newline
// when needed and "[stderr]\n<stderr>"; "(no output)" when both are empty; then
// each on its own line "[timed out after <ms>ms]" when timed out, and last
// "[killed by signal: <SIG>]" when a signal ended the shell or "[exit code: <n>]"
// when it exited non-zero.
func Render(v Value) string {
	body := renderStream(v.Stdout)
	if stderr := renderStream(v.Stderr); stderr != "" {
		if body != "" && !strings.HasSuffix(body, "\n") {
			body += "\n"
		}
		body += "[stderr]\n" + stderr
	}
	if body == "" {
		body = "(no output)"
	}
	var markers []string
	if v.TimedOut {
		markers = append(markers, "[timed out after "+strconv.FormatInt(v.TimeoutMs, 10)+"ms]")
	}
	switch {
	case v.Signal != nil:
		markers = append(markers, "[killed by signal: "+*v.Signal+"]")
	case v.ExitCode != nil && *v.ExitCode != 0:
		markers = append(markers, "[exit code: "+strconv.Itoa(*v.ExitCode)+"]")
	}
	if len(markers) == 0 {
		return body
	}
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	return body + strings.Join(markers, "\n")
}

package toolbash

import (
	"strconv"
	"strings"

	"github.com/dshgo/harness/services/subprocess"
)

// Stream is one collected output stream of a foreground run.
type Stream struct {
	// Text is the retained text: the whole stream, or its tail when Truncated.
	Text string `json:"text"`
	// Truncated reports that part of the stream is not in Text (and Head).
	Truncated bool `json:"truncated"`
	// SpillPath is the private file holding the complete stream, when one exists.
	SpillPath string `json:"spillPath,omitempty"`
	// Head is the beginning of a truncated stream, read back from the spill
	// file, so that both the first and the last lines reach the model.
	Head string `json:"head,omitempty"`
	// OmittedBytes is how many bytes between Head and Text are left out.
	OmittedBytes int64 `json:"omittedBytes,omitempty"`
	// OmittedLines is how many newlines the left-out bytes hold, or -1 when
	// unknown (no intact spill file).
	OmittedLines int64 `json:"omittedLines,omitempty"`
	// SpillCapped reports that the stream outgrew the spill cap, so no complete
	// copy exists.
	SpillCapped bool `json:"spillCapped,omitempty"`
}

// Value is the canonical value of the bash tool (dsh `{kind:'foreground', …}`
// or `{kind:'background', …}`).
type Value struct {
	// Kind is "foreground", or "background" for a run_in_background call
	// (answered by the tool-terminal plugin: then only ShellID, Note and
	// Sandbox are set).
	Kind string `json:"kind"`
	// ShellID names the background shell a run_in_background call started.
	ShellID string `json:"shellId,omitempty"`
	// Note is what the plugin that started a background shell tells the
	// model about it (how to read its output and stop it).
	Note string `json:"note,omitempty"`
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
	// Sandbox is what the OS sandbox enforced for the call (backend
	// "none" when it ran unsandboxed).
	Sandbox *subprocess.SandboxReport `json:"sandbox,omitempty"`
	// Protected are the notices for protected paths (harness.patch.yml,
	// .claude/, .git/config, …) the sandboxed command created or changed:
	// each change was undone and the command's version kept beside it.
	Protected []string `json:"protected,omitempty"`
	// NetworkRefused are the sandbox network proxy's refusals while the
	// command ran, each naming the host and the rule that would allow it.
	NetworkRefused []string `json:"networkRefused,omitempty"`
	// SandboxHint explains a workspace-write command that failed writing
	// outside its writable directories (a read-only file system).
	SandboxHint string `json:"sandboxHint,omitempty"`
}

// KindBackground is the Kind of a run_in_background call's value.
const KindBackground = "background"

// renderStream is a stream's text; when truncated: the head (if any), a note
// of how many bytes and lines were left out, the tail, and the B1 marker
// "[output truncated; full output: <path>]" ("(unavailable)" without a file).
func renderStream(s Stream) string {
	if !s.Truncated {
		return s.Text
	}
	var b strings.Builder
	if s.Head != "" {
		b.WriteString(s.Head)
		if !strings.HasSuffix(s.Head, "\n") {
			b.WriteByte('\n')
		}
	}
	b.WriteString("[… ")
	b.WriteString(strconv.FormatInt(s.OmittedBytes, 10))
	b.WriteString(" bytes")
	if s.OmittedLines >= 0 {
		b.WriteString(" (")
		b.WriteString(strconv.FormatInt(s.OmittedLines, 10))
		b.WriteString(" lines)")
	}
	b.WriteString(" omitted")
	if s.SpillCapped {
		b.WriteString("; the output exceeded the spill cap and was not saved")
	}
	b.WriteString(" …]\n")
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

// Render is the model-facing text of a bash result (B1, exact assembly); a
// background start renders as "[started in the background as shell ID]"
// and its note. A foreground result is:
// stdout (with its truncation marker); then, if stderr is non-empty, a newline
// when needed and "[stderr]\n<stderr>"; "(no output)" when both are empty; then
// each on its own line "[timed out after <ms>ms]" when timed out, and last
// "[killed by signal: <SIG>]" when a signal ended the shell or "[exit code: <n>]"
// when it exited non-zero, then "[sandbox: protected path … was undone …]" for
// each protected path the command changed, each network refusal, and the
// sandbox's note for a failed write outside the writable directories.
func Render(v Value) string {
	if v.Kind == KindBackground {
		out := "[started in the background as shell " + v.ShellID + "]"
		if v.Note != "" {
			out += "\n" + v.Note
		}
		return out
	}
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
	for _, p := range v.Protected {
		markers = append(markers, "["+p+"]")
	}
	for _, n := range v.NetworkRefused {
		markers = append(markers, "["+n+"]")
	}
	if v.SandboxHint != "" {
		markers = append(markers, "["+v.SandboxHint+"]")
	}
	if len(markers) == 0 {
		return body
	}
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	return body + strings.Join(markers, "\n")
}

package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Content is one model-facing content block of a tool result. Type is "text"
// (Text set) or "image" (Data holds base64 bytes, MimeType their type); other
// types pass through untouched. The JSON shape is the MCP/dsh content block.
type Content struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
}

// Text returns a text content block.
func Text(s string) Content { return Content{Type: "text", Text: s} }

// Error codes carried by ErrorInfo.Code. They are stable: models, transcripts and
// tests match on them (dsh A11).
const (
	CodeUnknownTool           = "UNKNOWN_TOOL"
	CodeInvalidArgs           = "INVALID_ARGS"
	CodeInvalidToolOutput     = "INVALID_TOOL_OUTPUT"
	CodeAborted               = "ABORTED"
	CodeAbortedBeforeDispatch = "ABORTED_BEFORE_DISPATCH"
	CodeToolTimeout           = "TOOL_TIMEOUT"
)

// Error names carried by ErrorInfo.Name for the codes above.
const (
	NameToolNotFound = "ToolNotFoundError"
	NameToolArgs     = "ToolArgsError"
	NameToolOutput   = "ToolOutputError"
	NameAbort        = "AbortError"
	NameToolTimeout  = "ToolTimeoutError"
)

// ErrorInfo is the structured part of a failed result: {name, code, reason?}.
// Reason is a user-facing detail that is persisted but never part of the
// model-facing content.
type ErrorInfo struct {
	Name   string `json:"name"`
	Code   string `json:"code"`
	Reason string `json:"reason,omitempty"`
}

// Error is an error with a stable code. A tool body (or a listener) returning an
// *Error (possibly wrapped) produces a failed result whose info is
// {Name, Code, Reason}; any other error produces a failed result without info.
type Error struct {
	Name    string // e.g. "FsError"; defaults to "ToolError" when empty
	Code    string // e.g. "FS_NOT_FOUND"
	Message string // model-facing message, without the "Error: " envelope
	Reason  string // optional user-facing detail, never shown to the model
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Info returns the {name, code, reason} triple of e.
func (e *Error) Info() *ErrorInfo {
	name := e.Name
	if name == "" {
		name = "ToolError"
	}
	return &ErrorInfo{Name: name, Code: e.Code, Reason: e.Reason}
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Conclusion is why a tool call ended the model's turn, and the turn's
// answer (see [Execution.ConcludeTurnAs]).
type Conclusion struct {
	// Reason is the agent result's reason, e.g. "plan".
	Reason string `json:"reason"`
	// Text, when not empty, is the agent result's text.
	Text string `json:"text,omitempty"`
}

// Outcome is the normalized result of one tool call: what the model sees
// (Content, IsError) plus host-only parts. A success carries Value (the canonical
// value returned by the body, never persisted) and no error; a failure carries
// ErrorMessage and optionally Error, never Value.
//
// Outcomes returned by Registry.Execute and observed by listeners are shared:
// treat them as immutable. Listeners change results through PostDecision, never
// by mutating an Outcome.
type Outcome struct {
	Content            []Content       `json:"content"`
	IsError            bool            `json:"isError"`
	Error              *ErrorInfo      `json:"error,omitempty"`
	Meta               json.RawMessage `json:"meta,omitempty"`
	AdditionalContexts []string        `json:"additionalContexts,omitempty"`
	ConcludesTurn      bool            `json:"concludesTurn,omitempty"`
	// Conclusion is the reason and text a body gave with
	// [Execution.ConcludeTurnAs] (nil when it gave none, or when
	// ConcludesTurn is false).
	Conclusion *Conclusion `json:"conclusion,omitempty"`
	// Elapsed is the call's own wall time, set by Scheduler.Run: from the
	// start of its preparation (argument checks, pre-execute hooks) to the
	// end of its body, excluding time spent waiting for an approval answer
	// (a person's wait) and for earlier calls' results. Zero when the
	// outcome did not come from a Scheduler.
	Elapsed time.Duration `json:"-"`
	// Denied marks the failure of a call a permission decision (a deny
	// rule, a hook, a refused approval or a guard) stopped before it ran.
	Denied bool `json:"-"`

	// ErrorMessage is the failure message without the "Error: " envelope.
	ErrorMessage string `json:"-"`
	// Value is the canonical value of a success: the body's Out for a typed tool,
	// the decoded JSON value for a raw one.
	Value any `json:"-"`
	// Err is the Go error behind a failure, when there is one: the error a
	// body or a listener returned, or a contained panic, whose chain then
	// holds a *core.PanicError with the panic value and stack (match it with
	// errors.As). Nil for successes and for failures the pipeline itself
	// decides (unknown tool, invalid arguments, denial, cancellation). It is
	// not part of the wire form; the model sees Content.
	Err error `json:"-"`

	exec   *Execution // the execution that normalized this outcome, if any
	inline [1]Content // backing store of a one-block Content (saves an allocation)
}

// Failure returns a failed outcome whose content is "Error: <message>" and whose
// info is info (may be nil).
func Failure(message string, info *ErrorInfo) *Outcome {
	return &Outcome{
		Content:      []Content{Text("Error: " + message)},
		IsError:      true,
		Error:        info,
		ErrorMessage: message,
	}
}

// Success returns a success outcome carrying value. Content is ignored by the
// pipeline for outcomes authored by Execute listeners: it re-renders the value
// through the tool's render function.
func Success(value any) *Outcome { return &Outcome{Value: value} }

// TextOf joins the text blocks of content with newlines; other blocks appear as
// "[<type> content]".
func TextOf(content []Content) string {
	var b strings.Builder
	for i, c := range content {
		if i > 0 {
			b.WriteByte('\n')
		}
		if c.Type == "text" {
			b.WriteString(c.Text)
		} else {
			fmt.Fprintf(&b, "[%s content]", c.Type)
		}
	}
	return b.String()
}

func unknownTool(name string) *Outcome {
	return Failure(fmt.Sprintf("unknown tool %q", name), &ErrorInfo{Name: NameToolNotFound, Code: CodeUnknownTool})
}

func abortedBeforeDispatch() *Outcome {
	return Failure("tool call aborted before dispatch", &ErrorInfo{Name: NameAbort, Code: CodeAbortedBeforeDispatch})
}

func aborted() *Outcome {
	return Failure("tool call aborted", &ErrorInfo{Name: NameAbort, Code: CodeAborted})
}

// TimeoutFailure returns the TOOL_TIMEOUT outcome used by the tool-timeout plugin:
// "tool call timed out after <ms>ms".
func TimeoutFailure(ms int64) *Outcome {
	return Failure(fmt.Sprintf("tool call timed out after %dms", ms), &ErrorInfo{Name: NameToolTimeout, Code: CodeToolTimeout})
}

func invalidOutput(name string, detail string) *Outcome {
	return Failure(fmt.Sprintf("tool %q returned invalid output: %s", name, detail),
		&ErrorInfo{Name: NameToolOutput, Code: CodeInvalidToolOutput})
}

// errorOutcome maps an error returned by a body or a listener to a failure.
func errorOutcome(err error) *Outcome {
	var te *Error
	if errors.As(err, &te) {
		o := Failure(te.Message, te.Info())
		o.Err = err
		return o
	}
	msg := err.Error()
	if msg == "" {
		msg = "<unprintable thrown value>"
	}
	o := Failure(msg, nil)
	o.Err = err
	return o
}

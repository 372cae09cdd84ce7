package toolfs

import "fmt"

// Code is a stable machine-readable failure code of the filesystem tools (dsh `FsErrorCode`).
type Code string

// Failure codes carried by *Error. They match dsh's fs vocabulary so policy layers,
// UIs and logs can route on them.
const (
	// CodeNotFound: the file is missing, or a read offset lies past its end.
	CodeNotFound Code = "FS_NOT_FOUND"
	// CodeNotRegularFile: the path is a directory or another non-regular file.
	CodeNotRegularFile Code = "FS_NOT_REGULAR_FILE"
	// CodeNotText: the file holds a NUL byte or invalid UTF-8.
	CodeNotText Code = "FS_NOT_TEXT"
	// CodeNotObserved: an overwrite or edit of a file this scope never read.
	CodeNotObserved Code = "FS_NOT_OBSERVED"
	// CodeStaleVersion: the file changed (or vanished) since this scope read it.
	CodeStaleVersion Code = "FS_STALE_VERSION"
	// CodeEditNotFound: edit's old_string occurs zero times.
	CodeEditNotFound Code = "FS_EDIT_NOT_FOUND"
	// CodeAmbiguousEdit: edit's old_string occurs more than once and replace_all is false.
	CodeAmbiguousEdit Code = "FS_AMBIGUOUS_EDIT"
	// CodeIO: any other operating-system failure.
	CodeIO Code = "FS_IO_ERROR"
	// CodeAborted: the call's context ended before the operation completed.
	CodeAborted Code = "FS_ABORTED"
	// CodeSandboxDenied: the sandbox policy refuses the path (a denyRead
	// path, or a write to a protected path), as it does to commands.
	CodeSandboxDenied Code = "FS_SANDBOX_DENIED"
)

// Error is a filesystem-tool failure with a stable code. Its message is what the
// model reads after the registry's `Error: ` envelope; Code travels in the
// result's error info.
type Error struct {
	// Code is the stable failure code.
	Code Code
	// Message is the model-facing text, already including any remedy.
	Message string
	// Err is the underlying cause, if any.
	Err error
}

// Error returns the model-facing message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrorName is the error class name reported in tool error info ("FsError").
func (e *Error) ErrorName() string { return "FsError" }

// ErrorCode is the stable code reported in tool error info.
func (e *Error) ErrorCode() string { return string(e.Code) }

func fsErrorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Remedies appended at the model boundary to guarded-mutation failures (dsh
// `remediateFsError`): the condition alone does not tell the model how to recover.
const (
	remedyStale       = " — re-read the file, then retry"
	remedyNotObserved = " — read the file, then retry"
)

package toolsearch

// Code is a stable failure code of the search tools (dsh `SearchErrorCode`).
type Code string

// Failure codes carried by *Error.
const (
	// CodeInvalidPattern: the regular expression or glob does not parse.
	CodeInvalidPattern Code = "SEARCH_INVALID_PATTERN"
	// CodeFailed: the search could not run or failed (missing path, ripgrep error).
	CodeFailed Code = "SEARCH_FAILED"
	// CodeRawOutputOverflow: ripgrep printed more than the raw-output cap.
	CodeRawOutputOverflow Code = "SEARCH_RAW_OUTPUT_OVERFLOW"
	// CodeAborted: the call's context ended first.
	CodeAborted Code = "SEARCH_ABORTED"
)

// Error is a search failure with a stable code; its message is model-facing.
type Error struct {
	// Code is the stable failure code.
	Code Code
	// Message is the model-facing text.
	Message string
	// Err is the underlying cause, if any.
	Err error
}

// Error returns the model-facing message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrorName is the error class reported in tool error info ("SearchError").
func (e *Error) ErrorName() string { return "SearchError" }

// ErrorCode is the stable code reported in tool error info.
func (e *Error) ErrorCode() string { return string(e.Code) }

func abortedError(tool string, cause error) *Error {
	return &Error{Code: CodeAborted, Message: tool + " was aborted before completion (tool timeout or caller cancellation)", Err: cause}
}

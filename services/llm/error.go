package llm

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Code is a stable, machine-routable failure class. Route on it, never on
// the message text.
type Code string

// Failure codes.
const (
	// CodeAuth: the credential is missing, wrong or not allowed (HTTP 401, 403).
	CodeAuth Code = "AUTH"
	// CodeBilling: the account has no balance or quota left (HTTP 402, or
	// 429 with insufficient_quota). Final: retrying cannot help until the
	// user tops up.
	CodeBilling Code = "BILLING"
	// CodeRateLimit: the provider throttled the request (HTTP 429). Retryable.
	CodeRateLimit Code = "RATE_LIMIT"
	// CodeContextLength: the request exceeds the model's context window.
	CodeContextLength Code = "CONTEXT_LENGTH"
	// CodeServer: the provider failed (HTTP 5xx, 408, in-stream error). Retryable.
	CodeServer Code = "SERVER"
	// CodeNetwork: the connection failed, was reset or timed out. Retryable
	// when nothing had been streamed yet.
	CodeNetwork Code = "NETWORK"
	// CodeProtocol: the provider rejected the request (other 4xx) or sent
	// something we cannot interpret.
	CodeProtocol Code = "PROTOCOL"
	// CodeUnsupportedOption: an option the route's model cannot honour.
	CodeUnsupportedOption Code = "UNSUPPORTED_OPTION"
	// CodeNoAdapter: no adapter is registered for the route, or the route has
	// no such model.
	CodeNoAdapter Code = "NO_ADAPTER"
	// CodeAborted: the caller cancelled (finish reason "aborted").
	CodeAborted Code = "ABORTED"
)

// ErrMissingAPIKey is wrapped by the CodeAuth error of a route that needs
// an API key and has none configured. The route's adapter is still
// registered (so a harness boots and its tools run without a key); every
// request fails with a message naming the variable and the harness.yml
// field to set. Front ends treat it as a configuration error (exit 2).
var ErrMissingAPIKey = errors.New("missing API key")

// Error is a model-call failure with a stable code.
type Error struct {
	// Code classifies the failure.
	Code Code
	// Status is the HTTP status, or 0 when there was no HTTP response.
	Status int
	// RetryAfter is the provider-requested delay (Retry-After / retry-after-ms), or 0.
	RetryAfter time.Duration
	// Message is a human-readable description, including the provider's own
	// error text when there is one. It never contains the API key.
	Message string
	// Err is the underlying error, if any.
	Err error
}

// Error renders "CODE: message" (with the HTTP status when known).
func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s (HTTP %d): %s", e.Code, e.Status, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether repeating the same request may succeed: rate
// limits, server failures and network failures. Adapters retry only when
// nothing has been streamed yet.
func (e *Error) Retryable() bool {
	switch e.Code {
	case CodeRateLimit, CodeServer, CodeNetwork:
		return true
	}
	return false
}

// Errorf builds an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// AsError finds an *Error in err's chain.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Aborted builds the error carried by a FinishAborted chunk from ctx.
func Aborted(ctx context.Context) *Error {
	cause := context.Cause(ctx)
	if cause == nil {
		cause = context.Canceled
	}
	return &Error{Code: CodeAborted, Message: "request cancelled: " + cause.Error(), Err: cause}
}

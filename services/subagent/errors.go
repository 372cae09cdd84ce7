package subagent

import (
	"errors"
	"fmt"
)

// Code is a stable error code of the subagents service; the delegation
// tools report it to the model as the result's error code.
type Code string

// Error codes.
const (
	// CodeUnknownProvider: no provider is registered under the name.
	CodeUnknownProvider Code = "UNKNOWN_PROVIDER"
	// CodeUnsupportedCapability: the request needs a capability the
	// provider does not advertise.
	CodeUnsupportedCapability Code = "UNSUPPORTED_CAPABILITY"
	// CodeUnknownAgent: no child (live or stored) has the id.
	CodeUnknownAgent Code = "UNKNOWN_AGENT"
	// CodeNotDirectChild: the caller is not the child's parent (a sibling,
	// a grandparent, the child itself, an unrelated session).
	CodeNotDirectChild Code = "NOT_DIRECT_CHILD"
	// CodeDepthLimit: starting the child would nest deeper than maxDepth.
	CodeDepthLimit Code = "DEPTH_LIMIT"
	// CodeBusy: the child is running a turn (send waits for nothing).
	CodeBusy Code = "AGENT_BUSY"
	// CodeNotRunning: interrupt found no running turn.
	CodeNotRunning Code = "AGENT_NOT_RUNNING"
	// CodeInvalidRequest: a request field is missing or malformed.
	CodeInvalidRequest Code = "INVALID_REQUEST"
	// CodeStartFailed: the provider could not start or resume the child.
	CodeStartFailed Code = "START_FAILED"
)

// ErrSubagent is matched (errors.Is) by every [*Error].
var ErrSubagent = errors.New("subagent")

// Error is a failure of the service with a stable [Code]. It wraps the
// provider's error, if any.
type Error struct {
	Code    Code
	Message string
	Err     error
}

// Error returns "CODE: message" (and the wrapped error).
func (e *Error) Error() string {
	s := string(e.Code) + ": " + e.Message
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the wrapped error.
func (e *Error) Unwrap() error { return e.Err }

// Is matches [ErrSubagent].
func (e *Error) Is(target error) bool { return target == ErrSubagent }

// Errorf returns an *Error with code and a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeOf returns the code of err's *Error, or "" when it has none.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

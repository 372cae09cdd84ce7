package core

import (
	"errors"
	"fmt"
)

// Sentinel errors callers test with errors.Is.
var (
	// ErrNotInjected is raised by [Use] for a service the plugin did not list
	// in [WithInject]. Use [Lookup] for optional services.
	ErrNotInjected = errors.New("service not injected")
	// ErrDuplicateService is returned by [Provide] when another fiber already
	// provides a service under the same name.
	ErrDuplicateService = errors.New("service already provided")
	// ErrInactive is returned when registering an effect, listener, service or
	// child plugin on a fiber that is unloading, failed or disposed, and by
	// [Use] when the fiber is not active.
	ErrInactive = errors.New("cannot create effect on inactive context")
	// ErrInTransition is returned by [Fiber.Await] given a context core
	// handed out (an activation's, a [Go] body's, a [StatusChanged]
	// listener's) when the wait would wait on the transition that runs the
	// caller: from inside Apply or a disposer, on the lifecycle queue, or in
	// a Go body whose activation has ended.
	ErrInTransition = errors.New("lifecycle call would wait on the transition that is running it")
	// ErrNoTarget is returned by a Bail or Run dispatch given the zero
	// [Target]: make targets with [Context.To] or [Context.Here].
	ErrNoTarget = errors.New("dispatch to the zero Target")
	// ErrAbandoned fails a fiber whose Apply was still running when the root
	// was aborted (start timeout).
	ErrAbandoned = errors.New("apply abandoned: start timeout")
)

// PanicError is a recovered panic from plugin code (Apply, a disposer, a
// listener, a goroutine started with [Go], a tool body). It carries the
// panic value and the goroutine stack at the point of the panic.
type PanicError struct {
	// Value is what was passed to panic.
	Value any
	// Stack is the formatted stack of the panicking goroutine.
	Stack []byte
}

// Error reports the panic value.
func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Unwrap returns the panic value when it is an error, so errors.Is sees
// through a panic(err).
func (e *PanicError) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}

// ConfigError is a plugin configuration that failed validation. Issues are
// reported with their field path ("timeout", "models[1].name").
type ConfigError struct {
	// Plugin is the plugin name.
	Plugin string
	// Issues lists each problem found.
	Issues []Issue
}

// Issue is one configuration problem at a field path.
type Issue struct {
	// Path is the dotted field path, empty for the whole config.
	Path string
	// Message says what is wrong.
	Message string
}

// Error renders "invalid config: path: message; …".
func (e *ConfigError) Error() string {
	s := "invalid config"
	for i, is := range e.Issues {
		if i == 0 {
			s += ": "
		} else {
			s += "; "
		}
		if is.Path != "" {
			s += is.Path + ": "
		}
		s += is.Message
	}
	return s
}

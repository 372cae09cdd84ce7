package tooltimeout

import (
	"context"
	"errors"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/tools"
)

// Config is empty: timeouts are declared by the tools themselves.
type Config struct{}

// Plugin registers the timeout listener on tools.Execute. It injects the tool
// registry so it is active exactly when tools are.
var Plugin = core.Define("tool-timeout", apply,
	core.WithInject(tools.Key.Name()),
	core.WithDescription("enforces each tool's declared timeout (TOOL_TIMEOUT)"))

// errTimedOut is the cancellation cause of the deadline this plugin sets.
var errTimedOut = errors.New("tool timeout")

func apply(c *core.Context, _ Config) error {
	return core.On(c, tools.Execute, Enforce)
}

// Enforce is the Execute listener: exported so custom stacks can place it
// explicitly.
func Enforce(ctx context.Context, e *tools.Execution, next core.Next[*tools.Execution, *tools.Outcome]) (*tools.Outcome, error) {
	t := e.Tool()
	if t == nil || t.Timeout() <= 0 {
		return next(ctx, e)
	}
	d := t.Timeout()
	tctx, cancel := context.WithTimeoutCause(ctx, d, errTimedOut)
	defer cancel()
	o, err := next(tctx, e)
	if errors.Is(context.Cause(tctx), errTimedOut) && ctx.Err() == nil {
		return tools.TimeoutFailure(d.Milliseconds()), nil
	}
	return o, err
}

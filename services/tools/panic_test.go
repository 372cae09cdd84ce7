package tools_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/tools"
)

var errBodyFailed = errors.New("body failed")

// A tool body that panics yields an error result whose Err is a
// *core.PanicError (value and stack of the panicking goroutine), as core
// reports a contained panic; PostExecute listeners and Result observers see
// the same error, and a panic(err) keeps err in the chain.
func TestPanickingBodyIsACorePanicErrorForCallersAndListeners(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.register(
		tools.Define("boom", "panics with a string", func(context.Context, *tools.Execution, struct{}) (string, error) {
			panic("kaboom")
		}),
		tools.Define("boomerr", "panics with an error", func(context.Context, *tools.Execution, struct{}) (string, error) {
			panic(errBodyFailed)
		}),
	)
	var mu sync.Mutex
	seen := map[string][]error{} // event -> Outcome.Err seen by listeners
	note := func(ev string, x *tools.Execution) {
		mu.Lock()
		defer mu.Unlock()
		seen[ev] = append(seen[ev], x.Outcome().Err)
	}
	e.on(core.On(e.c, tools.PostExecute, func(ctx context.Context, x *tools.Execution, next core.Next[*tools.Execution, tools.PostDecision]) (tools.PostDecision, error) {
		note("post", x)
		return next(ctx, x)
	}))
	e.on(core.On(e.c, tools.Result, func(_ context.Context, x *tools.Execution) error {
		note("result", x)
		return nil
	}))

	o := e.exec("boom", `{}`)
	if !o.IsError || text(o) != `Error: tool "boom" panicked: kaboom` {
		t.Fatalf("outcome %q", text(o))
	}
	var pe *core.PanicError
	if !errors.As(o.Err, &pe) {
		t.Fatalf("Outcome.Err = %#v, want a *core.PanicError in its chain", o.Err)
	}
	if pe.Value != "kaboom" || !strings.Contains(string(pe.Stack), "panic_test.go") {
		t.Errorf("PanicError value %v, stack without the panicking frame:\n%s", pe.Value, pe.Stack)
	}
	for _, ev := range []string{"post", "result"} {
		var lpe *core.PanicError
		if len(seen[ev]) != 1 || !errors.As(seen[ev][0], &lpe) || lpe != pe {
			t.Errorf("%s listener saw %v, want the same *core.PanicError", ev, seen[ev])
		}
	}

	o = e.exec("boomerr", `{}`)
	if !errors.As(o.Err, &pe) || !errors.Is(o.Err, errBodyFailed) {
		t.Errorf("panic(err): Outcome.Err = %v, want a *core.PanicError wrapping errBodyFailed", o.Err)
	}
}

// Err is the error a body returned; successes and failures the pipeline
// decides itself carry none.
func TestOutcomeErrIsTheBodysError(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.register(
		tools.Define("fails", "returns an error", func(context.Context, *tools.Execution, struct{}) (string, error) {
			return "", errBodyFailed
		}),
		echoTool(nil),
	)
	if o := e.exec("fails", `{}`); !errors.Is(o.Err, errBodyFailed) || text(o) != "Error: body failed" {
		t.Errorf("returned error: Err %v, text %q", o.Err, text(o))
	}
	var pe *core.PanicError
	if o := e.exec("fails", `{}`); errors.As(o.Err, &pe) {
		t.Error("a returned error is reported as a panic")
	}
	for _, c := range []struct{ name, args string }{{"echo", `{"text":"hi"}`}, {"nosuch", `{}`}, {"echo", `{"text":1}`}} {
		if o := e.exec(c.name, c.args); o.Err != nil {
			t.Errorf("%s %s: Err = %v, want nil", c.name, c.args, o.Err)
		}
	}
}

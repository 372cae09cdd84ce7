package tools_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// env is a root with the tools plugin active and one plugin context (c) that
// injects the registry, for registering tools and listeners in tests.
type env struct {
	t    testing.TB
	root *core.Root
	reg  *tools.Registry
	c    *core.Context
}

var pluginSeq atomic.Int64

func newEnv(t testing.TB) *env {
	t.Helper()
	root := core.NewRoot(core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(func() { _ = root.Dispose(context.Background()) })
	f := root.Context().Plugin(tools.Plugin, tools.Config{MaxParallel: 10})
	if err := f.Await(context.Background()); err != nil {
		t.Fatalf("tools plugin: %v", err)
	}
	e := &env{t: t, root: root}
	var ok bool
	if e.reg, ok = core.Lookup(root.Context(), tools.Key); !ok {
		t.Fatal("tools service not provided")
	}
	e.c = e.mount(func(*core.Context) error { return nil }).Context()
	return e
}

// mount applies a throwaway plugin that injects "tools" and runs apply.
func (e *env) mount(apply func(c *core.Context) error) *core.Fiber {
	e.t.Helper()
	name := fmt.Sprintf("test-plugin-%d", pluginSeq.Add(1))
	p := core.Define(name, func(c *core.Context, _ struct{}) error { return apply(c) }, core.WithInject(tools.Key.Name()))
	f := e.root.Context().Plugin(p, nil)
	if err := f.Await(context.Background()); err != nil {
		e.t.Fatalf("mount %s: %v", name, err)
	}
	if f.State() != core.StateActive {
		e.t.Fatalf("mount %s: state %v", name, f.State())
	}
	return f
}

func (e *env) register(ts ...*tools.Tool) {
	e.t.Helper()
	if err := e.reg.Register(e.c, ts...); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) on(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) exec(name, args string) *tools.Outcome {
	return e.reg.Execute(context.Background(), tools.Call{ID: "call-1", Name: name, Arguments: args})
}

func text(o *tools.Outcome) string { return tools.TextOf(o.Content) }

func code(o *tools.Outcome) string {
	if o.Error == nil {
		return ""
	}
	return o.Error.Code
}

type echoArgs struct {
	Text string `json:"text" jsonschema:"description=What to echo"`
}

func echoTool(calls *atomic.Int64) *tools.Tool {
	return tools.Define("echo", "Echo the text.", func(_ context.Context, _ *tools.Execution, a echoArgs) (string, error) {
		if calls != nil {
			calls.Add(1)
		}
		return a.Text, nil
	})
}

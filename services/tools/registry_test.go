package tools_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/tools"
)

func named(name, out string) *tools.Tool {
	return tools.Define(name, "returns "+out, func(context.Context, *tools.Execution, struct{}) (string, error) { return out, nil })
}

func names(ss []tools.Schema) string {
	var n []string
	for _, s := range ss {
		n = append(n, s.Name)
	}
	return strings.Join(n, ",")
}

func TestRegistrationIsAnEffectOfTheCallingFiber(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.mount(func(c *core.Context) error { return tools.Register(c, named("hello", "hi")) })
	if _, ok := e.reg.Get("hello", nil); !ok {
		t.Fatal("not registered")
	}
	if err := f.Dispose(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.reg.Get("hello", nil); ok {
		t.Fatal("still registered after the plugin was disposed")
	}
	if o := e.exec("hello", ""); code(o) != tools.CodeUnknownTool {
		t.Errorf("got %q", text(o))
	}
}

func TestDuplicateNames(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.register(named("a", "1"))
	err := e.reg.Register(e.c, named("a", "2"))
	if !errors.Is(err, tools.ErrDuplicateTool) || err.Error() != `tool "a" is already registered (for a per-agent variant, register through that agent's scoped context instead)` {
		t.Errorf("global duplicate: %v", err)
	}
	s, err := core.NewScope(e.c, core.NewScopeID("agent", nil))
	e.on(err)
	e.on(e.reg.Register(s.Context(), named("a", "scoped"))) // shadows: allowed
	err = e.reg.Register(s.Context(), named("a", "3"))
	if !errors.Is(err, tools.ErrDuplicateTool) || err.Error() != `tool "a" is already registered in this scope` {
		t.Errorf("scoped duplicate: %v", err)
	}
	if o := e.exec("a", ""); text(o) != "1" {
		t.Errorf("the failed insert changed the global tool: %q", text(o))
	}
}

func TestScopedShadowingAndVisibility(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.register(named("read", "global read"), named("bash", "global bash"))
	parentID := core.NewScopeID("parent", nil)
	parent, err := core.NewScope(e.c, parentID)
	e.on(err)
	child, err := core.NewScope(parent.Context(), core.NewScopeID("child", parentID))
	e.on(err)
	e.on(e.reg.Register(parent.Context(), named("read", "parent read")))
	e.on(e.reg.Register(child.Context(), named("only_child", "child")))
	exec := func(scope *core.ScopeID, name string) string {
		return text(e.reg.Execute(context.Background(), tools.Call{Name: name, Scope: scope}))
	}
	if got := exec(nil, "read"); got != "global read" {
		t.Errorf("global: %q", got)
	}
	if got := exec(child.ID(), "read"); got != "parent read" {
		t.Errorf("child inherits the parent's shadow: %q", got)
	}
	if got := exec(nil, "only_child"); got != `Error: unknown tool "only_child"` {
		t.Errorf("global sees a scoped tool: %q", got)
	}
	if got := names(e.reg.Schemas(child.ID())); got != "bash,read,only_child" {
		t.Errorf("child schemas %s", got)
	}
	if err := parent.Dispose(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := exec(child.ID(), "read"); got != "global read" {
		t.Errorf("after the parent scope was disposed: %q", got)
	}
}

func TestRestrict(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.register(named("read", "r"), named("bash", "b"), named("edit", "e"))
	if err := e.reg.Restrict(e.c, tools.Filter{Deny: []string{"bash"}}); err == nil || !strings.Contains(err.Error(), "requires a scoped context") {
		t.Errorf("global restrict: %v", err)
	}
	aID := core.NewScopeID("a", nil)
	a, err := core.NewScope(e.c, aID)
	e.on(err)
	e.on(e.reg.Register(a.Context(), named("own", "o")))
	errCases := []struct {
		f    tools.Filter
		want string
	}{
		{tools.Filter{}, "tools.Restrict with neither Allow nor Deny is a no-op"},
		{tools.Filter{Deny: []string{"run_code"}}, `tools.Restrict cannot name the reserved tool "run_code"`},
		{tools.Filter{Allow: []string{"read", "raed", "own"}}, `tools.Restrict names unknown global tool(s) "raed", "own"; known global tools: bash, edit, read`},
	}
	for _, tc := range errCases {
		if err := e.reg.Restrict(a.Context(), tc.f); err == nil || err.Error() != tc.want {
			t.Errorf("Restrict(%+v) = %v, want %q", tc.f, err, tc.want)
		}
	}
	e.on(e.reg.Restrict(a.Context(), tools.Filter{Deny: []string{"bash"}}))
	if got := names(e.reg.Schemas(aID)); got != "read,edit,own" {
		t.Errorf("deny bash: %s", got)
	}
	if o := e.reg.Execute(context.Background(), tools.Call{Name: "bash", Scope: aID}); code(o) != tools.CodeUnknownTool {
		t.Errorf("restricted tool executed: %q", text(o))
	}
	// A child scope inherits and intersects.
	bID := core.NewScopeID("b", aID)
	b, err := core.NewScope(a.Context(), bID)
	e.on(err)
	e.on(e.reg.Restrict(b.Context(), tools.Filter{Allow: []string{"read", "bash", "own"}}))
	if got := names(e.reg.Schemas(bID)); got != "read,own" {
		t.Errorf("child intersection: %s", got)
	}
	// Deny lists admit later globals; allow lists exclude them.
	e.register(named("late", "l"))
	if got := names(e.reg.Schemas(aID)); got != "read,edit,late,own" {
		t.Errorf("a after a late global: %s", got)
	}
	if got := names(e.reg.Schemas(bID)); got != "read,own" {
		t.Errorf("b after a late global: %s", got)
	}
	if err := b.Dispose(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.reg.Get("edit", aID); !ok {
		t.Error("disposing b lifted a's visibility wrongly")
	}
}

func TestSchemasAreDeepCopies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.register(echoTool(nil))
	s := e.reg.Schemas(nil)
	if len(s) != 1 || s[0].Name != "echo" || s[0].Description != "Echo the text." {
		t.Fatalf("%+v", s)
	}
	want := string(s[0].Parameters)
	for i := range s[0].Parameters {
		s[0].Parameters[i] = 'x'
	}
	if got := string(e.reg.Schemas(nil)[0].Parameters); got != want {
		t.Errorf("mutation leaked: %s", got)
	}
	if want != `{"properties":{"text":{"type":"string","description":"What to echo"}},"additionalProperties":false,"type":"object","required":["text"]}` {
		t.Errorf("parameters %s", want)
	}
}

func TestScopedPolicyListenersGateOnlyTheirScope(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.register(echoTool(nil))
	aID, bID := core.NewScopeID("a", nil), core.NewScopeID("b", nil)
	a, err := core.NewScope(e.c, aID)
	e.on(err)
	e.on(tools.OnPreExecute(a.Context(), func(context.Context, *tools.Execution) (tools.Decision, error) {
		return tools.Deny("a is read-only"), nil
	}))
	e.on(e.reg.Guard(a.Context(), func(*tools.Execution) string { return "a guard" }))
	if o := e.reg.Execute(context.Background(), tools.Call{Name: "echo", Arguments: `{"text":"x"}`, Scope: aID}); text(o) != "Error: a is read-only" {
		t.Errorf("a: %q", text(o))
	}
	if o := e.reg.Execute(context.Background(), tools.Call{Name: "echo", Arguments: `{"text":"x"}`, Scope: bID}); text(o) != "x" {
		t.Errorf("b: %q", text(o))
	}
}

func TestKnownNamesIgnoreRestrictions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.register(named("read", "r"), named("bash", "b"))
	id := core.NewScopeID("a", nil)
	a, err := core.NewScope(e.c, id)
	e.on(err)
	e.on(e.reg.Register(a.Context(), named("own", "o")))
	e.on(e.reg.Restrict(a.Context(), tools.Filter{Deny: []string{"bash"}}))
	if got := strings.Join(e.reg.KnownNames(id), ","); got != "read,bash,own" {
		t.Errorf("known %s", got)
	}
}

func TestDispatchResolvesTheToolAgain(t *testing.T) {
	t.Parallel()
	t.Run("unregistered during pre-execute: UNKNOWN_TOOL, the body never runs", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		var calls atomic.Int64
		f := e.mount(func(c *core.Context) error { return tools.Register(c, echoTool(&calls)) })
		e.on(core.On(e.c, tools.PreExecute, func(ctx context.Context, x *tools.Execution, next core.Next[*tools.Execution, tools.Decision]) (tools.Decision, error) {
			if err := f.Dispose(ctx); err != nil {
				return tools.Decision{}, err
			}
			return next(ctx, x)
		}))
		if o := e.exec("echo", `{"text":"x"}`); code(o) != tools.CodeUnknownTool || calls.Load() != 0 {
			t.Errorf("got %q (code %q), body ran %d times", text(o), code(o), calls.Load())
		}
	})
	t.Run("re-registered during pre-execute: the new definition runs", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		f := e.mount(func(c *core.Context) error { return tools.Register(c, named("hello", "old")) })
		e.on(core.On(e.c, tools.PreExecute, func(ctx context.Context, x *tools.Execution, next core.Next[*tools.Execution, tools.Decision]) (tools.Decision, error) {
			if err := f.Dispose(ctx); err != nil {
				return tools.Decision{}, err
			}
			e.register(named("hello", "new"))
			return next(ctx, x)
		}))
		if o := e.exec("hello", ""); o.IsError || text(o) != "new" {
			t.Errorf("got %q", text(o))
		}
	})
	t.Run("restricted away during pre-execute: UNKNOWN_TOOL", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		e.register(named("hello", "hi"))
		s, err := core.NewScope(e.c, core.NewScopeID("agent", nil))
		e.on(err)
		e.on(core.On(e.c, tools.PreExecute, func(ctx context.Context, x *tools.Execution, next core.Next[*tools.Execution, tools.Decision]) (tools.Decision, error) {
			if err := e.reg.Restrict(s.Context(), tools.Filter{Deny: []string{"hello"}}); err != nil {
				return tools.Decision{}, err
			}
			return next(ctx, x)
		}))
		o := e.reg.Execute(context.Background(), tools.Call{ID: "c", Name: "hello", Scope: s.ID()})
		if code(o) != tools.CodeUnknownTool {
			t.Errorf("got %q", text(o))
		}
	})
}

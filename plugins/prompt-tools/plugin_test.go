package prompttools

import (
	"context"
	"log/slog"
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type pathArgs struct {
	Path string `json:"path"`
}

func tool(name string) *tools.Tool {
	return tools.Define(name, "tool "+name, func(context.Context, *tools.Execution, pathArgs) (string, error) { return "", nil })
}

func TestRegistryToolsReachTheAssemblyInToolOrder(t *testing.T) {
	root := core.NewRoot(core.WithLogger(slog.New(slog.DiscardHandler)))
	t.Cleanup(func() { _ = root.Dispose(context.Background()) })
	rc := root.Context()
	// Mounted before the services it needs: it waits for them.
	bridge := rc.Plugin(Plugin, nil)
	cfg := systemprompt.DefaultConfig()
	cfg.ToolOrder = []string{"bash", systemprompt.ToolOrderRest}
	rc.Plugin(systemprompt.Plugin, &cfg)
	rc.Plugin(tools.Plugin, nil)
	var scope *core.ScopeID
	user := rc.Plugin(core.Define("tool-user", func(c *core.Context, _ struct{}) error {
		if err := tools.Register(c, tool("read"), tool("bash"), tool("edit")); err != nil {
			return err
		}
		sc, err := core.NewScope(c, core.NewScopeID("agent", nil))
		if err != nil {
			return err
		}
		scope = sc.ID()
		return tools.Register(sc.Context(), tool("agent_only"))
	}, core.WithInject(tools.Key.Name())), nil)
	for _, f := range []*core.Fiber{bridge, user} {
		if err := f.Await(context.Background()); err != nil || f.State() != core.StateActive {
			t.Fatalf("%s: state %v err %v", f.Plugin().Name(), f.State(), err)
		}
	}
	svc, _ := core.Lookup(rc, systemprompt.Key)
	for _, tc := range []struct {
		scope *core.ScopeID
		want  []string
	}{
		{nil, []string{"bash", "edit", "read"}},
		{scope, []string{"bash", "agent_only", "edit", "read"}},
	} {
		a, err := svc.Assemble(context.Background(), systemprompt.AssembleContext{Scope: tc.scope})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range a.Tools {
			names = append(names, s.Name)
		}
		if !slices.Equal(names, tc.want) {
			t.Fatalf("scope %v tools = %q, want %q", tc.scope, names, tc.want)
		}
		if string(a.Tools[0].Parameters) == "" || a.Tools[0].Description != "tool bash" {
			t.Fatalf("schema not projected: %+v", a.Tools[0])
		}
	}
}

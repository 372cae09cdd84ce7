package tools_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/dshgo/harness/services/tools"
)

type pluginArgs struct {
	Text string `json:"text"`
}

// NewPlugin is the whole tool plugin: it waits for the registry, registers
// its tools as effects (gone when the fiber is disposed) and names them in
// its description.
func TestNewPluginRegistersItsToolsAsEffects(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	echo := tools.Define("echo_text", "Echo.", func(_ context.Context, _ *tools.Execution, a pluginArgs) (string, error) { return a.Text, nil })
	p := tools.NewPlugin("tool-echo", echo)
	if !slices.Equal(p.Inject(), []string{"tools"}) || p.Description() != "Contributes the tools echo_text" {
		t.Fatalf("inject %v, description %q", p.Inject(), p.Description())
	}
	f := e.root.Context().Plugin(p, nil)
	if err := f.Await(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.reg.Get("echo_text", nil); !ok {
		t.Fatal("echo_text not registered")
	}
	if err := f.Dispose(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.reg.Get("echo_text", nil); ok {
		t.Fatal("echo_text still registered after the plugin was disposed")
	}

	// A nil tool fails the plugin instead of panicking.
	bad := e.root.Context().Plugin(tools.NewPlugin("tool-nil", nil), nil)
	if err := bad.Await(context.Background()); err == nil || errors.Is(err, context.Canceled) {
		t.Fatalf("nil tool: %v", err)
	}
}

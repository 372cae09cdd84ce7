package hello_test

import (
	"context"
	"testing"

	"example.com/hello/hello"
	"github.com/dshgo/harness"
	"github.com/dshgo/harness/core"
)

func TestPluginLoadsFromAManifest(t *testing.T) {
	h, err := harness.New(harness.WithManifest([]byte("plugins:\n  - name: hello\n    config: {greeting: Hi}\n")))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer h.Stop(context.Background())
	g, ok := core.Lookup(h.Root.Context(), hello.Key)
	if !ok {
		t.Fatal("greeter service not provided")
	}
	if got := g.Greet("Ada"); got != "Hi, Ada!" {
		t.Fatalf("got %q", got)
	}
	hello.Greeted.Emit(context.Background(), h.Root.Context().Here(), "Ada")
}

package agent_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
	prompttools "github.com/dshgo/harness/plugins/prompt-tools"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tokenmeter"
	"github.com/dshgo/harness/services/tools"
)

// An agent whose tools no provider offers to the model (no prompt-tools
// row) refuses to open a session, naming the tools and the row to add,
// instead of running a model that never sees them; with the row mounted
// the same session opens.
func TestAgentRefusesToolsThatAreNotOfferedToTheModel(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t, nil)
	root := core.NewRoot(core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(func() { _ = root.Dispose(context.Background()) })
	rc := root.Context()
	rc.Plugin(systemprompt.Plugin, nil)
	rc.Plugin(tools.Plugin, nil)
	rc.Plugin(tokenmeter.Plugin, nil)
	mountLLM(rc, srv.URL)
	rc.Plugin(toolsPlugin, struct {
		Dir string `yaml:"dir"`
	}{t.TempDir()})
	rc.Plugin(sessions.JSONLPlugin, sessions.JSONLConfig{StateDir: t.TempDir()})
	fb := rc.Plugin(agent.Plugin, agent.Config{MaxSteps: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := fb.Await(ctx); err != nil {
		t.Fatal(err)
	}
	svc, _ := core.Lookup(rc, agent.Key)

	_, err := svc.Open(ctx, agent.Options{Model: "test/m1"})
	var notOffered *agent.ToolsNotOfferedError
	if !errors.Is(err, agent.ErrToolsNotOffered) || !errors.As(err, &notOffered) || notOffered.Count != 3 {
		t.Fatalf("Open: %v, want a ToolsNotOfferedError for 3 tools", err)
	}
	for _, want := range []string{"read_file", "prompt-tools"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d requests reached the model", n)
	}

	pt := rc.Plugin(prompttools.Plugin, nil)
	if err := pt.Await(ctx); err != nil {
		t.Fatal(err)
	}
	ss, err := svc.Open(ctx, agent.Options{Model: "test/m1"})
	if err != nil {
		t.Fatalf("Open with prompt-tools: %v", err)
	}
	defer ss.Close(ctx)

	// The row goes away while the session is open: the next turn refuses
	// before any request.
	if err := pt.Dispose(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ss.Run(ctx, "hi"); !errors.Is(err, agent.ErrToolsNotOffered) {
		t.Fatalf("Run: %v, want ErrToolsNotOffered", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d requests reached the model", n)
	}
}

package tooltimeout_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dshgo/harness/core"
	tooltimeout "github.com/dshgo/harness/plugins/tool-timeout"
	"github.com/dshgo/harness/services/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type startKey struct{}

type waitArgs struct {
	Ms     int  `json:"ms"`
	Ignore bool `json:"ignore,omitempty"`
}

func setup(t *testing.T) *tools.Registry {
	t.Helper()
	root := core.NewRoot(core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(func() { _ = root.Dispose(context.Background()) })
	for _, p := range []core.Plugin{tools.Plugin, tooltimeout.Plugin} {
		if err := root.Context().Plugin(p, nil).Await(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	reg, _ := core.Lookup(root.Context(), tools.Key)
	wait := func(ctx context.Context, _ *tools.Execution, a waitArgs) (string, error) {
		if a.Ignore {
			time.Sleep(time.Duration(a.Ms) * time.Millisecond)
			return "ignored the deadline", nil
		}
		if cancel, ok := ctx.Value(startKey{}).(context.CancelFunc); ok {
			cancel() // the caller gives up while the body runs
		}
		select {
		case <-time.After(time.Duration(a.Ms) * time.Millisecond):
			return "finished", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	p := core.Define("timeout-test-tools", func(c *core.Context, _ struct{}) error {
		return tools.Register(c,
			tools.Define("slow", "declares 50ms", wait, tools.WithTimeout(50*time.Millisecond)),
			tools.Define("free", "declares nothing", wait))
	}, core.WithInject(tools.Key.Name()))
	if err := root.Context().Plugin(p, nil).Await(context.Background()); err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestDeclaredTimeoutIsEnforced(t *testing.T) {
	reg := setup(t)
	cases := []struct {
		tool, args, want, code string
	}{
		{"slow", `{"ms":5}`, "finished", ""},
		{"slow", `{"ms":5000}`, "Error: tool call timed out after 50ms", tools.CodeToolTimeout},
		{"slow", `{"ms":120,"ignore":true}`, "Error: tool call timed out after 50ms", tools.CodeToolTimeout},
		{"free", `{"ms":80}`, "finished", ""},
	}
	for _, tc := range cases {
		o := reg.Execute(context.Background(), tools.Call{Name: tc.tool, Arguments: tc.args})
		got := tools.TextOf(o.Content)
		gotCode := ""
		if o.Error != nil {
			gotCode = o.Error.Code
		}
		if got != tc.want || gotCode != tc.code {
			t.Errorf("%s %s: %q (%s)", tc.tool, tc.args, got, gotCode)
		}
	}
}

func TestCallerCancellationIsNotATimeout(t *testing.T) {
	reg := setup(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The body cancels the caller's context when it starts.
	o := reg.Execute(context.WithValue(ctx, startKey{}, cancel), tools.Call{Name: "slow", Arguments: `{"ms":5000}`})
	if o.Error == nil || o.Error.Code != tools.CodeAborted {
		t.Errorf("got %q %+v", tools.TextOf(o.Content), o.Error)
	}
}

// Package policytest holds the test fixtures shared by the policy plugins'
// tests (permission, approval, hooks): the real subprocess-local plugin, a
// real bash tool over it, and a root with the tool registry.
package policytest

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/tools"
)

// BashArgs are the fixture bash tool's arguments.
type BashArgs struct {
	Command     string `json:"command"`
	Description string `json:"description,omitempty"`
}

// BashOut is the fixture bash tool's value.
type BashOut struct {
	Stdout   string `json:"stdout"`
	ExitCode int    `json:"exitCode"`
}

// BashTool is a minimal real bash tool: `bash -c command` through the
// subprocess service in Dir, its stdout as the content. It is parallel-safe,
// so a step of several calls overlaps their bodies.
var BashTool = core.Define("bash-fixture", func(c *core.Context, _ struct{}) error {
	rt := core.Use(c, subprocess.Key)
	t := tools.Define("bash", "Runs a shell command.", func(ctx context.Context, e *tools.Execution, a BashArgs) (BashOut, error) {
		res, err := rt.Run(subprocess.Spec{
			Context: ctx, Argv: []string{"bash", "-c", a.Command}, Dir: os.TempDir(),
			Stdin: subprocess.IgnoreStdin(), Stdout: subprocess.Collect(1 << 20), Stderr: subprocess.Collect(1 << 20),
			Grace: time.Second,
		})
		if err != nil {
			return BashOut{}, err
		}
		out := BashOut{Stdout: res.Stdout.Text()}
		if res.Outcome.ExitCode != nil {
			out.ExitCode = *res.Outcome.ExitCode
		}
		return out, nil
	},
		tools.WithRender(func(a BashArgs, o BashOut) []tools.Content { return []tools.Content{tools.Text(o.Stdout)} }),
		tools.WithConcurrencySafe(func(BashArgs) bool { return true }))
	return tools.Register(c, t)
}, core.WithInject(tools.Key.Name(), subprocess.Key.Name()))

// Mount is a plugin and its config.
type Mount struct {
	Plugin core.Plugin
	Config any
}

// Harness mounts subprocess-local, the tool registry, the bash tool and
// then extra, in that order; waits until all are active; and returns the
// registry. The root is disposed when the test ends.
func Harness(t testing.TB, extra ...Mount) *tools.Registry {
	t.Helper()
	return HarnessWith(t, Mount{BashTool, nil}, extra...)
}

// HarnessWith is Harness with another bash tool (such as the real
// tool-bash plugin, so tests see what the shipped tool does).
func HarnessWith(t testing.TB, bash Mount, extra ...Mount) *tools.Registry {
	t.Helper()
	return Boot(t, append([]Mount{{subprocess.Plugin, nil}, {tools.Plugin, nil}, bash}, extra...)...)
}

// Boot mounts exactly mounts, in order (the caller includes subprocess-local
// with its config, the tool registry and a bash tool), waits until all are
// active, and returns the registry. The root is disposed when the test ends.
func Boot(t testing.TB, all ...Mount) *tools.Registry {
	t.Helper()
	root := core.NewRoot(core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(func() {
		if err := root.Dispose(context.Background()); err != nil {
			t.Errorf("dispose: %v", err)
		}
	})
	var fibers []*core.Fiber
	for _, m := range all {
		fibers = append(fibers, root.Context().Plugin(m.Plugin, m.Config))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i, f := range fibers {
		if err := f.Await(ctx); err != nil || f.State() != core.StateActive {
			t.Fatalf("plugin %s: state %v, err %v, pending on %v", all[i].Plugin.Name(), f.State(), err, f.PendingOn())
		}
	}
	var reg *tools.Registry
	probe := core.Define("probe", func(c *core.Context, _ struct{}) error {
		reg = core.Use(c, tools.Key)
		return nil
	}, core.WithInject(tools.Key.Name()))
	if err := root.Context().Plugin(probe, nil).Await(ctx); err != nil {
		t.Fatal(err)
	}
	return reg
}

// BashCall is a bash tool call with the given id and command.
func BashCall(id, command string) tools.Call {
	return tools.Call{ID: id, Name: "bash", Arguments: `{"command":` + Quote(command) + `}`}
}

// Run executes a bash call through the registry's programmatic API.
func Run(reg *tools.Registry, id, command string) *tools.Outcome {
	return reg.Execute(context.Background(), BashCall(id, command))
}

// Quote renders s as a JSON string.
func Quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Text is the outcome's text content.
func Text(o *tools.Outcome) string { return tools.TextOf(o.Content) }

package toolbash

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tools"
	"github.com/dshgo/harness/services/tools/workdir"
)

func mountBash(t *testing.T, cfg Config) (*tools.Registry, *core.Root) {
	t.Helper()
	root := core.NewRoot()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		root.Dispose(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, p := range []core.Plugin{tools.Plugin, subprocess.Plugin, systemprompt.Plugin} {
		if err := root.Context().Plugin(p, nil).Await(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := root.Context().Plugin(Plugin, &cfg).Await(ctx); err != nil {
		t.Fatal(err)
	}
	reg, _ := core.Lookup(root.Context(), tools.Key)
	return reg, root
}

func TestPluginBashThroughRegistry(t *testing.T) {
	t.Parallel()
	var cfg Config
	cfg.SetDefaults()
	cfg.Cwd = t.TempDir()
	reg, root := mountBash(t, cfg)
	tests := []struct {
		args    string
		want    string
		isError bool
	}{
		{`{"command":"ls -a","description":"list files"}`, ".\n..\n", false},
		{`{"command":"echo oops >&2; exit 4","description":"fail on purpose"}`, "[stderr]\noops\n[exit code: 4]", false},
		{`{"command":"sleep 3694","description":"sleep","timeoutMs":200}`, "(no output)\n[timed out after 200ms]\n[killed by signal: SIGTERM]", false},
		{`{"command":"true","description":"x","workdir":"/nonexistent/dir"}`, "", true},
		{`{"command":"","description":"x"}`, "Error: invalid command: expected a non-empty string", true},
		{`{"command":"echo no description"}`, "no description\n", false}, // optional, as in Claude Code
	}
	for _, tt := range tests {
		o := reg.Execute(context.Background(), tools.Call{ID: "1", Name: "bash", Arguments: tt.args})
		got := tools.TextOf(o.Content)
		if o.IsError != tt.isError || (tt.want != "" && got != tt.want) {
			t.Errorf("%s: got %q (isError %v), want %q", tt.args, got, o.IsError, tt.want)
		}
	}
	if mode := reg.ExecutionMode(tools.Call{Name: "bash", Arguments: `{"command":"ls","description":"list"}`}); mode != tools.Exclusive {
		t.Errorf("bash must be exclusive, got %v", mode)
	}
	sp, _ := core.Lookup(root.Context(), systemprompt.Key)
	a, err := sp.Assemble(context.Background(), systemprompt.AssembleContext{})
	if err != nil {
		t.Fatal(err)
	}
	var guidance string
	for _, s := range a.Sections {
		if s.Name == "tool:bash" {
			guidance = s.Text
		}
	}
	if !strings.Contains(guidance, "[exit code: N]") {
		t.Errorf("tool:bash guidance missing: %q", guidance)
	}
}

func TestPluginBashAbortedByCaller(t *testing.T) {
	t.Parallel()
	var cfg Config
	cfg.SetDefaults()
	cfg.Cwd = t.TempDir()
	reg, _ := mountBash(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	o := reg.Execute(ctx, tools.Call{ID: "1", Name: "bash", Arguments: `{"command":"sleep 3695","description":"sleep"}`})
	if !o.IsError || o.Error == nil || o.Error.Code != "ABORTED" {
		t.Fatalf("%+v", o)
	}
}

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	var c Config
	c.SetDefaults()
	c.MaxOutputBytes = 0
	if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), "maxOutputBytes:") {
		t.Fatal(err)
	}
}

func TestPluginBashCallWorkdir(t *testing.T) {
	t.Parallel()
	var cfg Config
	cfg.SetDefaults()
	cfg.Cwd = t.TempDir()
	reg, _ := mountBash(t, cfg)
	other := t.TempDir()
	ctx := workdir.With(context.Background(), other)
	o := reg.Execute(ctx, tools.Call{ID: "1", Name: "bash", Arguments: `{"command":"pwd","description":"print dir"}`})
	if got := tools.TextOf(o.Content); got != other+"\n" {
		t.Fatalf("got %q, want %q", got, other)
	}
}

// B02: disposing the harness (session end, Ctrl-C) in the middle of a call
// kills the command's background jobs too.
func TestPluginDisposeKillsRunningCommand(t *testing.T) {
	t.Parallel()
	var cfg Config
	cfg.SetDefaults()
	cfg.Cwd = t.TempDir()
	root := core.NewRoot()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, p := range []core.Plugin{tools.Plugin, subprocess.Plugin} {
		if err := root.Context().Plugin(p, nil).Await(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := root.Context().Plugin(Plugin, &cfg).Await(ctx); err != nil {
		t.Fatal(err)
	}
	reg, _ := core.Lookup(root.Context(), tools.Key)
	tag := strconv.Itoa(os.Getpid())
	cmd := ": B02-dispose-" + tag + "; sleep 3603." + tag + " & yes dispose-" + tag + " > /dev/null & sleep 3603." + tag
	done := make(chan *tools.Outcome, 1)
	go func() {
		done <- reg.Execute(ctx, tools.Call{ID: "1", Name: "bash", Arguments: `{"command":"` + cmd + `","description":"spawn jobs"}`})
	}()
	for len(alive(t, "sleep 3603."+tag)) < 2 {
		if ctx.Err() != nil {
			t.Fatal("the command never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := root.Dispose(ctx); err != nil {
		t.Fatal(err)
	}
	<-done
	if left := append(append(alive(t, "B02-dispose-"+tag), alive(t, "sleep 3603."+tag)...), alive(t, "yes dispose-"+tag)...); len(left) > 0 {
		t.Fatalf("still running after dispose: %v", left)
	}
}

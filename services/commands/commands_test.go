package commands_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/commands"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func names(cs []commands.Command) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return strings.Join(out, " ")
}

func TestParseSplitsNameAndArgsAndLeavesPathsAlone(t *testing.T) {
	tests := []struct {
		line, name, args string
		ok               bool
	}{
		{"/model  deepseek-chat ", "model", "deepseek-chat", true},
		{"  /help", "help", "", true},
		{"/git:commit -m x", "git:commit", "-m x", true},
		{"/usr/bin/env is a path", "", "", false},
		{"hello /help", "", "", false},
		{"/", "", "", false},
	}
	for _, tt := range tests {
		name, args, ok := commands.Parse(tt.line)
		if name != tt.name || args != tt.args || ok != tt.ok {
			t.Errorf("Parse(%q) = %q, %q, %v", tt.line, name, args, ok)
		}
	}
}

func TestRegisterRejectsBadAndDuplicateNames(t *testing.T) {
	r := commands.NewRegistry()
	if err := r.Register(nil, commands.Command{Name: "/deploy", Summary: "ship it"}); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(nil, commands.Command{Name: "deploy"}); err == nil || err.Error() != "commands: /deploy is already registered" {
		t.Fatalf("duplicate: %v", err)
	}
	if err := r.Register(nil, commands.Command{Name: "Bad Name"}); err == nil || !strings.Contains(err.Error(), `invalid command name "Bad Name"`) {
		t.Fatalf("bad name: %v", err)
	}
	if c, ok := r.Lookup("deploy"); !ok || c.Summary != "ship it" {
		t.Fatalf("Lookup: %+v %v", c, ok)
	}
}

// TestPluginContributesCommandsForItsLifetime: the commands plugin provides
// the standard set; another plugin's command is listed, completed and run
// while that plugin is mounted, and gone after it is disposed.
func TestPluginContributesCommandsForItsLifetime(t *testing.T) {
	ctx := context.Background()
	root := core.NewRoot(core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer root.Dispose(ctx)
	if err := root.Context().Plugin(commands.Plugin, nil).Await(ctx); err != nil {
		t.Fatal(err)
	}
	reg, ok := core.Lookup(root.Context(), commands.Key)
	if !ok {
		t.Fatal("no commands service")
	}
	want := "clear compact context cost exit help model permissions resume sessions tools"
	if got := names(reg.List()); got != want {
		t.Fatalf("standard set:\n got %s\nwant %s", got, want)
	}
	deploy := core.Define("deploy", func(c *core.Context, _ struct{}) error {
		return core.Use(c, commands.Key).Register(c, commands.Command{Name: "deploy", Args: "[env]", Summary: "deploy the app",
			Run: func(_ context.Context, inv commands.Invocation) (commands.Reply, error) {
				return commands.Reply{Prompt: "deploy to " + inv.Args}, nil
			}})
	}, core.WithInject(commands.Key.Name()))
	f := root.Context().Plugin(deploy, nil)
	if err := f.Await(ctx); err != nil {
		t.Fatal(err)
	}
	if got := names(reg.Complete("/d")); got != "deploy" {
		t.Fatalf("Complete(/d) = %s", got)
	}
	c, _ := reg.Lookup("deploy")
	if rep, err := c.Run(ctx, commands.Invocation{Args: "staging"}); err != nil || rep.Prompt != "deploy to staging" {
		t.Fatalf("Run: %+v %v", rep, err)
	}
	help, _ := reg.Lookup("help")
	rep, _ := help.Run(ctx, commands.Invocation{})
	if !strings.Contains(rep.Text, "| `/deploy [env]` | deploy the app |") || !strings.Contains(rep.Text, "| `/model [route]` |") {
		t.Fatalf("help:\n%s", rep.Text)
	}
	if err := f.Dispose(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.Lookup("deploy"); ok {
		t.Fatal("/deploy outlived its plugin")
	}
}

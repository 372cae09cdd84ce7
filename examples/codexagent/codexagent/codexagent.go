// Package codexagent is a subagents provider, written outside the harness
// repository, that runs an external agent CLI once per turn through the
// subprocess service: `codex exec [--model M] PROMPT`, whose stdout is the
// answer. Importing the package registers the plugin "subagent-codex".
package codexagent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/subagent"
	"github.com/dshgo/harness/services/subprocess"
)

// Config is the plugin's harness.yml config.
type Config struct {
	// Name is the provider name (an agent definition's `provider:`).
	Name string `yaml:"name"`
	// Command and Args start the agent; the prompt is the last argument.
	Command string   `yaml:"command"`
	Args    []string `yaml:"args"`
}

// SetDefaults runs `codex exec --skip-git-repo-check` as provider "codex".
func (c *Config) SetDefaults() {
	c.Name, c.Command, c.Args = "codex", "codex", []string{"exec", "--skip-git-repo-check"}
}

// Plugin registers the provider with the subagents service.
var Plugin = core.Define("subagent-codex", func(c *core.Context, cfg Config) error {
	p := &provider{cfg: cfg, proc: core.Use(c, subprocess.Key)}
	return core.Use(c, subagent.Key).Register(c, cfg.Name, p)
}, core.WithInject(subagent.Key.Name(), subprocess.Key.Name()))

func init() { core.Register(Plugin) }

type provider struct {
	cfg  Config
	proc *subprocess.Runtime
}

// Capabilities: a model per child; nothing else (a request for more is refused).
func (p *provider) Capabilities() []subagent.Capability {
	return []subagent.Capability{subagent.CapModel}
}

// Start prepares a child; each turn is one process.
func (p *provider) Start(_ context.Context, req subagent.Request) (subagent.Child, error) {
	argv := append([]string{p.cfg.Command}, p.cfg.Args...)
	if req.Model != "" {
		argv = append(argv, "--model", req.Model)
	}
	return &child{id: sessions.NewID(time.Now()), argv: argv, dir: req.Parent.Cwd, proc: p.proc}, nil
}

type child struct {
	id   string
	argv []string
	dir  string
	proc *subprocess.Runtime
}

func (ch *child) ID() string                      { return ch.id }
func (ch *child) Close(ctx context.Context) error { return nil }

// Turn runs the command with message as its last argument. Cancelling ctx
// terminates the process group.
func (ch *child) Turn(ctx context.Context, message string) subagent.Outcome {
	h, err := ch.proc.Spawn(subprocess.Spec{Context: ctx, Argv: append(ch.argv, message), Dir: ch.dir,
		Stdin: subprocess.IgnoreStdin(), Stdout: subprocess.Collect(1 << 20), Stderr: subprocess.Collect(8 << 10), Grace: 2 * time.Second})
	if err != nil {
		return subagent.Outcome{Status: subagent.StatusFailed, Error: err.Error()}
	}
	out, err := h.Wait(context.WithoutCancel(ctx))
	switch {
	case ctx.Err() != nil:
		return subagent.Outcome{Status: subagent.StatusAborted, Error: ctx.Err().Error()}
	case err != nil:
		return subagent.Outcome{Status: subagent.StatusFailed, Error: err.Error()}
	case out.ExitCode == nil || *out.ExitCode != 0:
		tail := strings.TrimSpace(h.Collected().Stderr.Text())
		return subagent.Outcome{Status: subagent.StatusFailed, Error: fmt.Sprintf("%s: %s: %s", ch.argv[0], out, tail)}
	}
	return subagent.Outcome{Status: subagent.StatusCompleted, Text: strings.TrimSpace(h.Collected().Stdout.Text()), Steps: 1}
}

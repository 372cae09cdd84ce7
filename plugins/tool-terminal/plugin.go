package toolterminal

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/services/agent/lifecycle"
	"github.com/dshgo/harness/services/commands"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/tools"
	"github.com/dshgo/harness/services/tools/workdir"
)

var (
	//go:embed bash_output.md
	outputDescription string
	//go:embed kill_shell.md
	killDescription string
	//go:embed write_stdin.md
	writeDescription string
)

// Duration is a configuration duration written as a Go duration string in
// harness.yml ("3s", "10m"); see manifest.Duration.
type Duration = manifest.Duration

// Config is the tool-terminal configuration (harness.yml row `name: tool-terminal`).
type Config struct {
	// Tool is the shell tool whose run_in_background calls start background
	// shells (bash).
	Tool string `yaml:"tool" json:"tool,omitempty" jsonschema:"default=bash"`
	// Cwd is the working directory of a call that carries none; empty
	// means the process working directory when the plugin is applied.
	Cwd string `yaml:"cwd" json:"cwd,omitempty"`
	// MaxOutputBytes is each stream's in-memory tail, in bytes (64000).
	MaxOutputBytes int64 `yaml:"maxOutputBytes" json:"maxOutputBytes,omitempty" jsonschema:"minimum=1,default=64000"`
	// MaxSpillBytes caps each stream's spill file, in bytes (64 MiB).
	MaxSpillBytes int64 `yaml:"maxSpillBytes" json:"maxSpillBytes,omitempty" jsonschema:"minimum=1,default=67108864"`
	// Grace is the wait between SIGTERM and SIGKILL when a shell is stopped
	// (a duration such as 3s).
	Grace Duration `yaml:"grace" json:"grace,omitempty"`
	// MaxShells is how many background shells one session may run at once (16).
	MaxShells int `yaml:"maxShells" json:"maxShells,omitempty" jsonschema:"minimum=1,default=16"`
	// MaxFinished is how many ended shells a session keeps readable; older
	// ones are forgotten with their output (32).
	MaxFinished int `yaml:"maxFinished" json:"maxFinished,omitempty" jsonschema:"minimum=0,default=32"`
	// MaxWait caps a call's wait_ms (a duration such as 10m).
	MaxWait Duration `yaml:"maxWait" json:"maxWait,omitempty"`
}

// Defaults.
const (
	DefaultMaxOutputBytes = 64_000
	DefaultMaxSpillBytes  = 64 << 20
	DefaultGrace          = 3 * time.Second
	DefaultMaxWait        = 10 * time.Minute
	DefaultMaxShells      = 16
	DefaultMaxFinished    = 32
)

// SetDefaults applies the defaults.
func (c *Config) SetDefaults() {
	c.Tool = "bash"
	c.MaxOutputBytes, c.MaxSpillBytes = DefaultMaxOutputBytes, DefaultMaxSpillBytes
	c.Grace, c.MaxWait = Duration(DefaultGrace), Duration(DefaultMaxWait)
	c.MaxShells, c.MaxFinished = DefaultMaxShells, DefaultMaxFinished
}

// Validate rejects empty names and non-positive limits, naming the field.
func (c Config) Validate() error {
	switch {
	case c.Tool == "":
		return fmt.Errorf("tool: must name the shell tool (bash)")
	case c.MaxOutputBytes < 1:
		return fmt.Errorf("maxOutputBytes: must be a positive number of bytes")
	case c.MaxSpillBytes < 1:
		return fmt.Errorf("maxSpillBytes: must be a positive number of bytes")
	case c.Grace <= 0 || c.Grace.D() > subprocess.MaxGrace:
		return fmt.Errorf("grace: must be positive and at most %v", subprocess.MaxGrace)
	case c.MaxWait < 0:
		return fmt.Errorf("maxWait: must not be negative")
	case c.MaxShells < 1:
		return fmt.Errorf("maxShells: must be at least 1")
	case c.MaxFinished < 0:
		return fmt.Errorf("maxFinished: must not be negative")
	}
	return nil
}

// Plugin takes over the shell tool's run_in_background calls and registers
// bash_output, kill_shell and write_stdin.
var Plugin = core.Define("tool-terminal", apply,
	core.WithInject(tools.Key.Name(), subprocess.Key.Name()),
	core.WithDescription("background shells: bash run_in_background, bash_output, kill_shell, write_stdin; killed with their session"))

func apply(c *core.Context, cfg Config) error {
	cwd, err := workdir.Default(cfg.Cwd)
	if err != nil {
		return err
	}
	m := &manager{c: c, rt: core.Use(c, subprocess.Key), cfg: cfg, cwd: cwd, shells: map[string]*shell{}}
	// Registered first, undone last: every shell is killed when the plugin
	// unloads (the watchers' contexts end first and kill theirs too).
	if err := c.Effect("background shells", func() (func(), error) { return m.close, nil }); err != nil {
		return err
	}
	// A run_in_background call of the shell tool, once the permission
	// checks passed, starts a shell here instead of running the body.
	if err := core.On(c, tools.Execute, func(ctx context.Context, e *tools.Execution, next core.Next[*tools.Execution, *tools.Outcome]) (*tools.Outcome, error) {
		if e.Name() != cfg.Tool {
			return next(ctx, e)
		}
		var a startArgs
		if decodeArgs(e, &a) != nil || !a.RunInBackground {
			return next(ctx, e)
		}
		v, err := m.start(ctx, e, a)
		if err != nil {
			return tools.Failure(err.Error(), nil), nil
		}
		return tools.Success(v), nil
	}); err != nil {
		return err
	}
	if err := tools.Register(c, m.outputTool(), m.killTool(), m.writeTool()); err != nil {
		return err
	}
	// /tasks in the front ends that run registered commands, when the
	// commands registry is up (its row comes earlier in harness.yml).
	if reg, ok := core.Lookup(c, commands.Key); ok && reg != nil {
		if err := reg.Register(c, commands.Command{Name: "tasks", Summary: "the background shells of this session (tool-terminal)", Run: m.tasksCommand}); err != nil {
			return err
		}
	}
	// The model hears of a shell that ended with the result of its next
	// tool call, or before its next prompt.
	if err := core.On(c, tools.PostExecute, func(ctx context.Context, e *tools.Execution, next core.Next[*tools.Execution, tools.PostDecision]) (tools.PostDecision, error) {
		d, err := next(ctx, e)
		if err != nil {
			return d, err
		}
		if notes := m.exitNotices(e.Scope()); len(notes) > 0 {
			d = d.WithContexts(notes...)
		}
		return d, nil
	}); err != nil {
		return err
	}
	if err := core.On(c, lifecycle.UserPromptSubmit, func(ctx context.Context, p lifecycle.Prompt, next core.Next[lifecycle.Prompt, lifecycle.Decision]) (lifecycle.Decision, error) {
		d, err := next(ctx, p)
		if err != nil {
			return d, err
		}
		if notes := m.exitNotices(p.Session.Scope); len(notes) > 0 {
			d = d.Merge(lifecycle.Decision{AdditionalContext: notes})
		}
		return d, nil
	}); err != nil {
		return err
	}
	// A session's shells end with it.
	return core.On(c, lifecycle.SessionEnd, func(_ context.Context, p lifecycle.End) error {
		if p.Session.Scope != nil {
			m.endScope(p.Session.Scope)
		}
		return nil
	})
}

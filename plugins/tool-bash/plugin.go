package toolbash

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/agent/lifecycle"
	"github.com/dshgo/harness/services/spill"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tools"
	"github.com/dshgo/harness/services/tools/workdir"
)

var (
	//go:embed bash.md
	description string
	//go:embed prompt.md
	guidance string
)

// Config is the tool-bash configuration (harness.yml row `name: tool-bash`).
type Config struct {
	// Cwd is the default working directory; empty means the process working
	// directory when the plugin is applied.
	Cwd string `yaml:"cwd" json:"cwd,omitempty"`
	// Timeout is the default deadline of a command (2m).
	Timeout Duration `yaml:"timeout" json:"timeout,omitempty"`
	// MaxTimeout caps a per-call timeoutMs (10m).
	// Cap on a call's timeoutMs argument (a duration such as 10m).
	MaxTimeout Duration `yaml:"maxTimeout" json:"maxTimeout,omitempty"`
	// MaxOutputBytes is the per-stream in-memory tail, in bytes (64000).
	MaxOutputBytes int64 `yaml:"maxOutputBytes" json:"maxOutputBytes,omitempty" jsonschema:"minimum=1,default=64000"`
	// MaxSpillBytes caps each stream's spill file, in bytes (64 MiB).
	MaxSpillBytes int64 `yaml:"maxSpillBytes" json:"maxSpillBytes,omitempty" jsonschema:"minimum=1,default=67108864"`
	// Grace is the wait between SIGTERM and SIGKILL when a command is stopped
	// (a duration; default 3s).
	Grace Duration `yaml:"grace" json:"grace,omitempty"`
}

// SetDefaults applies the A14 defaults.
func (c *Config) SetDefaults() {
	c.Timeout, c.MaxTimeout, c.Grace = Duration(DefaultTimeout), Duration(DefaultMaxTimeout), Duration(DefaultGrace)
	c.MaxOutputBytes, c.MaxSpillBytes = DefaultMaxOutputBytes, DefaultMaxSpillBytes
}

// Validate rejects non-positive limits, naming the field.
func (c Config) Validate() error {
	switch {
	case c.Timeout <= 0:
		return fmt.Errorf("timeout: must be positive")
	case c.MaxTimeout <= 0:
		return fmt.Errorf("maxTimeout: must be positive")
	case c.Grace <= 0 || c.Grace.D() > subprocess.MaxGrace:
		return fmt.Errorf("grace: must be positive and at most %v", subprocess.MaxGrace)
	case c.MaxOutputBytes < 1:
		return fmt.Errorf("maxOutputBytes: must be a positive number of bytes")
	case c.MaxSpillBytes < 1:
		return fmt.Errorf("maxSpillBytes: must be a positive number of bytes")
	}
	return nil
}

// Plugin registers the bash tool and, when a system-prompt service is mounted,
// its guidance section tool:bash.
var Plugin = core.Define("tool-bash", apply,
	core.WithInject(tools.Key.Name(), subprocess.Key.Name()),
	core.WithDescription("the bash tool: one fresh bash -c per call over the subprocess service"))

func apply(c *core.Context, cfg Config) error {
	cwd, err := workdir.Default(cfg.Cwd)
	if err != nil {
		return err
	}
	x := &Executor{
		Runtime:        core.Use(c, subprocess.Key),
		Cwd:            cwd,
		Timeout:        cfg.Timeout.D(),
		MaxTimeout:     cfg.MaxTimeout.D(),
		MaxOutputBytes: cfg.MaxOutputBytes,
		MaxSpillBytes:  cfg.MaxSpillBytes,
		Grace:          cfg.Grace.D(),
		Spills:         func() (spill.Store, bool) { return core.Lookup(c, spill.Key) },
	}
	if err := tools.Register(c, Tool(x)); err != nil {
		return err
	}
	// The first call of a session would start the watchdog, probe the
	// sandbox and start the session's shared sandbox one after the other;
	// they start when the session does, while its first model request is
	// in flight.
	if err := core.On(c, lifecycle.SessionStart, func(ctx context.Context, p lifecycle.Start, next core.Next[lifecycle.Start, lifecycle.Decision]) (lifecycle.Decision, error) {
		x.prewarm(c, p.Session.Cwd)
		return next(ctx, p)
	}); err != nil {
		return err
	}
	if sp, ok := core.Lookup(c, systemprompt.Key); ok {
		_, err := sp.Section(c, systemprompt.Section{
			Name:        "tool:bash",
			Order:       systemprompt.SectionOrder(systemprompt.OrderToolBash),
			Text:        strings.TrimSpace(guidance),
			Interpolate: systemprompt.InterpolateOff,
		})
		return err
	}
	return nil
}

// prewarm runs the runtime's Prewarm for the session working directory
// (else the tool's) under the call's policy, in the background.
func (x *Executor) prewarm(c *core.Context, cwd string) {
	if cwd == "" {
		cwd = x.Cwd
	}
	policy := x.Runtime.SandboxPolicy()
	_ = core.Go(c, func(ctx context.Context) error {
		x.Runtime.Prewarm(ctx, &policy, cwd)
		return nil
	})
}

// Tool defines the bash tool over x. It declares no registry timeout: its
// deadline is the executor's.
func Tool(x *Executor) *tools.Tool {
	return tools.Define("bash", strings.TrimSpace(description),
		func(ctx context.Context, e *tools.Execution, args Args) (Value, error) {
			v, err := x.run(workdir.With(ctx, workdir.Of(ctx, e.Context(), "")), args, tools.ProgressOf(ctx, e))
			if err == nil {
				x.adoptSpills(ctx, e, &v)
			}
			return v, err
		},
		tools.WithRender(func(_ Args, v Value) []tools.Content { return []tools.Content{tools.Text(Render(v))} }),
		tools.WithPresent(Present))
}

// Present is how a bash call looks: kind execute, titled with its command
// (its first line); pending, the whole command ("$ …") and the
// description (when given) as text, for an approval to show; a background
// start, the shell's id as text; done, the output as
// terminal content, failed with the reason when the command timed out, was
// killed, was aborted or exited non-zero (the model is told the same by
// the result's markers).
func Present(in tools.PresentInput[Args, Value]) tools.Presentation {
	p := tools.Presentation{Kind: tools.KindExecute, Title: commandTitle(in.Args.Command)}
	if in.Pending() {
		p.Content = []tools.ToolCallContent{tools.TextContent("$ " + in.Args.Command)}
		if d := strings.TrimSpace(in.Args.Description); d != "" {
			p.Content = append(p.Content, tools.TextContent(d))
		}
		if in.Args.RunInBackground {
			p.Content = append(p.Content, tools.TextContent("in the background"))
		}
		return p
	}
	if !in.Succeeded() {
		return p
	}
	v := in.Out
	if v.Kind == KindBackground {
		p.Content = []tools.ToolCallContent{tools.TextContent("running in the background as shell " + v.ShellID)}
		p.Summarize("background shell " + v.ShellID)
		return p
	}
	out := v.Stdout.Text
	if v.Stderr.Text != "" {
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += "\n"
		}
		out += v.Stderr.Text
	}
	var sig string
	if v.Signal != nil {
		sig = *v.Signal
	}
	p.Content = []tools.ToolCallContent{tools.TerminalContent(in.ID, out, v.ExitCode, sig)}
	switch {
	case v.TimedOut:
		p.Fail(fmt.Sprintf("timed out after %dms", v.TimeoutMs))
	case v.Aborted:
		p.Fail("aborted")
	case sig != "":
		p.Fail("killed by signal " + sig)
	case v.ExitCode != nil && *v.ExitCode != 0:
		p.Fail(fmt.Sprintf("exit code %d", *v.ExitCode))
	}
	return p
}

// commandTitle is a command's first non-empty line, with " …" when more
// lines follow.
func commandTitle(cmd string) string {
	lines := strings.Split(strings.TrimSpace(cmd), "\n")
	t := strings.TrimSpace(lines[0])
	if len(lines) > 1 {
		t += " …"
	}
	return t
}

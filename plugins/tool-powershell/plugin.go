package toolpowershell

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/services/spill"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/tools"
	"github.com/dshgo/harness/services/tools/workdir"
)

//go:embed powershell.md
var description string

// Config is the tool-powershell configuration (harness.yml row `name:
// tool-powershell`).
type Config struct {
	// Enabled registers the powershell tool; unset: on Windows only.
	// Outside Windows it needs pwsh (PowerShell 7) on PATH.
	Enabled *bool `yaml:"enabled" json:"enabled,omitempty"`
	// Cwd is the default working directory; empty means the process working
	// directory when the plugin is applied.
	Cwd string `yaml:"cwd" json:"cwd,omitempty"`
	// Timeout is the default deadline of a script (a duration; 2m).
	Timeout manifest.Duration `yaml:"timeout" json:"timeout,omitempty"`
	// MaxTimeout caps a call's timeoutMs argument (a duration; 10m).
	MaxTimeout manifest.Duration `yaml:"maxTimeout" json:"maxTimeout,omitempty"`
	// MaxOutputBytes is the per-stream in-memory tail, in bytes (64000).
	MaxOutputBytes int64 `yaml:"maxOutputBytes" json:"maxOutputBytes,omitempty" jsonschema:"minimum=1,default=64000"`
	// MaxSpillBytes caps each stream's spill file, in bytes (64 MiB).
	MaxSpillBytes int64 `yaml:"maxSpillBytes" json:"maxSpillBytes,omitempty" jsonschema:"minimum=1,default=67108864"`
	// Grace is the wait between asking a stopped script's processes to end
	// and killing them (a duration; default 3s).
	Grace manifest.Duration `yaml:"grace" json:"grace,omitempty"`
}

// SetDefaults applies the defaults (those of the bash tool).
func (c *Config) SetDefaults() {
	c.Timeout, c.MaxTimeout, c.Grace = manifest.Duration(2*time.Minute), manifest.Duration(10*time.Minute), manifest.Duration(3*time.Second)
	c.MaxOutputBytes, c.MaxSpillBytes = 64_000, 64<<20
}

// Validate rejects non-positive limits, naming the field.
func (c Config) Validate() error {
	switch {
	case c.Timeout <= 0:
		return errors.New("timeout: must be positive")
	case c.MaxTimeout <= 0:
		return errors.New("maxTimeout: must be positive")
	case c.Grace <= 0 || c.Grace.D() > subprocess.MaxGrace:
		return fmt.Errorf("grace: must be positive and at most %v", subprocess.MaxGrace)
	case c.MaxOutputBytes < 1:
		return errors.New("maxOutputBytes: must be a positive number of bytes")
	case c.MaxSpillBytes < 1:
		return errors.New("maxSpillBytes: must be a positive number of bytes")
	}
	return nil
}

// On reports whether the tool is registered on platform goos.
func (c Config) On(goos string) bool {
	if c.Enabled != nil {
		return *c.Enabled
	}
	return goos == "windows"
}

// Plugin registers the powershell tool (see Config.On).
var Plugin = core.Define("tool-powershell", apply,
	core.WithInject(tools.Key.Name(), subprocess.Key.Name()),
	core.WithDescription("the powershell tool: one fresh pwsh (else powershell.exe) -Command per call over the subprocess service; on by default on Windows only"))

func apply(c *core.Context, cfg Config) error {
	if !cfg.On(runtime.GOOS) {
		return nil
	}
	sh, err := FindShell(runtime.GOOS, exec.LookPath)
	if err != nil {
		return err
	}
	cwd, err := workdir.Default(cfg.Cwd)
	if err != nil {
		return err
	}
	x := &executor{rt: core.Use(c, subprocess.Key), shell: sh, cwd: cwd, cfg: cfg,
		spills: func() (spill.Store, bool) { return core.Lookup(c, spill.Key) }}
	return tools.Register(c, tools.Define("powershell", Description(sh), x.execute,
		tools.WithRender(func(_ Args, v Value) []tools.Content { return []tools.Content{tools.Text(Render(v))} })))
}

// Args are the powershell tool's arguments.
type Args struct {
	Command     string   `json:"command" jsonschema_description:"The PowerShell script to run."`
	Description string   `json:"description,omitempty" jsonschema_description:"What the script does, in 5-10 words of active voice."`
	TimeoutMs   *float64 `json:"timeoutMs,omitempty" jsonschema_description:"Optional deadline in milliseconds (default 120000, at most 600000)."`
	Workdir     *string  `json:"workdir,omitempty" jsonschema_description:"Optional working directory; a relative path resolves against the session working directory."`
}

// Validate rejects an empty script and a bad deadline.
func (a Args) Validate() error {
	switch {
	case strings.TrimSpace(a.Command) == "":
		return errors.New("invalid command: expected a non-empty string")
	case a.TimeoutMs != nil && (!(*a.TimeoutMs > 0) || *a.TimeoutMs > 1e15):
		return fmt.Errorf("invalid timeoutMs: expected a positive number, got %v", *a.TimeoutMs)
	}
	return nil
}

// executor runs powershell calls over the subprocess service.
type executor struct {
	rt     *subprocess.Runtime
	shell  Shell
	cwd    string
	cfg    Config
	spills func() (spill.Store, bool)
}

// errTimeout is the cause of a call's own deadline.
var errTimeout = errors.New("powershell timeout")

// execute runs one call under the deployment's default sandbox policy
// (none on Windows), collecting both streams with spill files.
func (x *executor) execute(ctx context.Context, e *tools.Execution, args Args) (Value, error) {
	if err := args.Validate(); err != nil {
		return Value{}, err
	}
	timeout := x.cfg.Timeout.D()
	if args.TimeoutMs != nil {
		timeout = time.Duration(*args.TimeoutMs * float64(time.Millisecond))
	}
	timeout = min(timeout, x.cfg.MaxTimeout.D())
	dir := workdir.Of(ctx, e.Context(), x.cwd)
	if args.Workdir != nil && *args.Workdir != "" {
		dir = *args.Workdir
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(workdir.Of(ctx, e.Context(), x.cwd), dir)
		}
	}
	var sb *subprocess.SandboxPolicy
	if policy := x.rt.SandboxPolicy(); policy.Enabled() {
		sb = &policy
	}
	runCtx, cancel := context.WithTimeoutCause(ctx, timeout, errTimeout)
	defer cancel()
	res, err := x.rt.Run(subprocess.Spec{
		Context: runCtx, Sandbox: sb, Argv: Argv(x.shell, args.Command), Dir: dir,
		Env:    commandEnv(ctx),
		Stdin:  subprocess.IgnoreStdin(),
		Stdout: subprocess.CollectSpill(x.cfg.MaxOutputBytes, x.cfg.MaxSpillBytes),
		Stderr: subprocess.CollectSpill(x.cfg.MaxOutputBytes, x.cfg.MaxSpillBytes),
		Grace:  x.cfg.Grace.D(),
	})
	if err != nil {
		return Value{}, fmt.Errorf("powershell could not run the script: %w", err)
	}
	timedOut := errors.Is(context.Cause(runCtx), errTimeout)
	v := Value{ExitCode: res.Outcome.ExitCode, Signal: res.Outcome.Signal, TimedOut: timedOut,
		Aborted: runCtx.Err() != nil && !timedOut, TimeoutMs: timeout.Milliseconds(),
		Stdout: streamOf(res.Stdout), Stderr: streamOf(res.Stderr), Sandbox: &res.Sandbox}
	x.adoptSpills(ctx, e, &v)
	return v, nil
}

// adoptSpills hands the streams' spill files to the spill store when it
// can adopt files (private, per session, deleted at exit).
func (x *executor) adoptSpills(ctx context.Context, e *tools.Execution, v *Value) {
	store, ok := x.spills()
	if !ok {
		return
	}
	adopter, ok := store.(spill.FileAdopter)
	if !ok {
		return
	}
	for label, s := range map[string]*Stream{"stdout": &v.Stdout, "stderr": &v.Stderr} {
		if s.SpillPath == "" {
			continue
		}
		ref, err := adopter.AdoptFile(context.WithoutCancel(ctx), spill.SaveRequest{
			Owner:         spill.Owner{SessionID: spill.OwnerOf(e.Scope())},
			Source:        spill.Source{Kind: spill.SourceTool, ToolName: e.Name(), CallID: e.CallID(), Label: label},
			SuggestedName: e.Name() + "-" + label + ".log",
		}, s.SpillPath)
		if err == nil {
			s.SpillPath = string(ref.Locator)
		}
	}
}

// commandEnv is the session's variables (workdir.EnvFrom), then NO_COLOR
// and TERM=dumb.
func commandEnv(ctx context.Context) map[string]string {
	env := map[string]string{}
	for k, v := range workdir.EnvFrom(ctx) {
		env[k] = v
	}
	env["NO_COLOR"], env["TERM"] = "1", "dumb"
	return env
}

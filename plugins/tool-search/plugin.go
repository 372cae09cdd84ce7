package toolsearch

import (
	"context"
	_ "embed"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/subprocess/sandbox"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tools"
	"github.com/dshgo/harness/services/tools/workdir"
)

var (
	//go:embed grep.md
	grepDescription string
	//go:embed glob.md
	globDescription string
	//go:embed grep_prompt.md
	grepGuidance string
	//go:embed glob_prompt.md
	globGuidance string
)

// Config is the tool-search configuration (harness.yml row `name: tool-search`).
type Config struct {
	// Cwd is the session working directory relative paths resolve against;
	// empty means the process working directory when the plugin is applied.
	Cwd string `yaml:"cwd" json:"cwd,omitempty"`
	// Backend selects the implementation: "auto" (ripgrep when rg is on PATH
	// and the subprocess service is mounted, else pure Go), "ripgrep" or "go".
	// Search implementation.
	Backend string `yaml:"backend" json:"backend,omitempty" jsonschema:"enum=auto,enum=ripgrep,enum=go,default=auto"`
	// Ripgrep is the rg executable; empty means "rg" looked up on PATH.
	Ripgrep string `yaml:"ripgrep" json:"ripgrep,omitempty"`
	// GrepMaxMatches is how many grep matches are shown inline (250).
	// Grep matches shown inline (more go to a spill file).
	GrepMaxMatches int `yaml:"grepMaxMatches" json:"grepMaxMatches,omitempty" jsonschema:"minimum=1,default=250"`
	// GrepMaxLineBytes caps a grep preview line, in bytes (2000).
	GrepMaxLineBytes int `yaml:"grepMaxLineBytes" json:"grepMaxLineBytes,omitempty" jsonschema:"minimum=1,default=2000"`
	// GlobMaxResults is how many glob paths are shown inline (100).
	// Glob paths shown inline (more go to a spill file).
	GlobMaxResults int `yaml:"globMaxResults" json:"globMaxResults,omitempty" jsonschema:"minimum=1,default=100"`
	// SampleOverCapGlobResults shows an over-cap glob page sampled round-robin
	// across the search root's top-level entries instead of the newest paths.
	SampleOverCapGlobResults bool `yaml:"sampleOverCapGlobResults" json:"sampleOverCapGlobResults,omitempty"`
	// TimeoutMs bounds one search, in milliseconds (30000).
	TimeoutMs int `yaml:"timeoutMs" json:"timeoutMs,omitempty" jsonschema:"minimum=1,default=30000"`
}

// SetDefaults applies dsh's defaults.
func (c *Config) SetDefaults() {
	d := DefaultCaps()
	c.Backend = "auto"
	c.GrepMaxMatches, c.GrepMaxLineBytes, c.GlobMaxResults = d.MaxMatches, d.MaxLineBytes, d.MaxResults
	c.TimeoutMs = int(d.Timeout / time.Millisecond)
}

// Validate rejects an unknown backend and non-positive caps, naming the field.
func (c Config) Validate() error {
	switch c.Backend {
	case "auto", "ripgrep", "go":
	default:
		return fmt.Errorf("backend: must be auto, ripgrep or go, not %q", c.Backend)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"grepMaxMatches", c.GrepMaxMatches}, {"grepMaxLineBytes", c.GrepMaxLineBytes}, {"globMaxResults", c.GlobMaxResults}, {"timeoutMs", c.TimeoutMs}} {
		if f.v < 1 {
			return fmt.Errorf("%s: must be positive", f.name)
		}
	}
	return nil
}

// Plugin registers grep and glob and, when a system-prompt service is mounted,
// the guidance sections tool:grep and tool:glob.
var Plugin = core.Define("tool-search", apply,
	core.WithInject(tools.Key.Name()),
	core.WithDescription("grep and glob tools (ripgrep when available, pure Go otherwise)"))

func apply(c *core.Context, cfg Config) error {
	cwd, err := workdir.Default(cfg.Cwd)
	if err != nil {
		return err
	}
	caps := DefaultCaps()
	caps.MaxMatches, caps.MaxLineBytes, caps.MaxResults = cfg.GrepMaxMatches, cfg.GrepMaxLineBytes, cfg.GlobMaxResults
	caps.Timeout = time.Duration(cfg.TimeoutMs) * time.Millisecond
	caps.SampleOverCapGlob = cfg.SampleOverCapGlobResults
	s := &Searcher{Caps: caps}
	if rt, ok := core.Lookup(c, subprocess.Key); ok {
		s.Contain = func(dir string) *sandbox.Checker { return sandbox.NewChecker(rt.SandboxPolicy(), dir, cwd) }
	}
	if cfg.Backend != "go" {
		rt, hasRuntime := core.Lookup(c, subprocess.Key)
		rg := cfg.Ripgrep
		if rg == "" {
			rg, _ = exec.LookPath("rg")
		}
		switch {
		case hasRuntime && rg != "":
			s.Runner, s.RG = subprocessRunner{rt: rt}, rg
		case cfg.Backend == "ripgrep":
			return fmt.Errorf("backend: ripgrep requested but %s", map[bool]string{true: "rg was not found on PATH", false: "no subprocess service is mounted"}[hasRuntime])
		}
	}
	backend := "go"
	if s.UsesRipgrep() {
		backend = "ripgrep " + s.RG
	}
	c.Logger().Debug("tool-search backend", "backend", backend)
	if err := tools.Register(c, Tools(c, s, cwd)...); err != nil {
		return err
	}
	return addGuidance(c)
}

// Tools defines grep and glob over s, resolving relative paths against the
// call's working directory (package workdir), else cwd.
// Over-cap results are saved to the spill store when c can look one up.
func Tools(c *core.Context, s *Searcher, cwd string) []*tools.Tool {
	grep := tools.Define("grep", strings.TrimSpace(grepDescription),
		func(ctx context.Context, e *tools.Execution, args GrepArgs) (GrepValue, error) {
			dir := workdir.Of(ctx, e.Context(), cwd)
			v, err := s.Grep(ctx, dir, args)
			if err != nil {
				return v, toolError(err)
			}
			v = s.HideGrep(dir, v)
			if policy, ok := core.Lookup(c, tools.ReadPolicyKey); ok {
				v = Withhold(v, dir, func(path string) (string, bool) { return policy.ReadDenied(e, path) })
			}
			if len(v.Matches) > s.Caps.MaxMatches {
				v.Spill = save(ctx, c, e, "grep-results.txt", FullGrepText(v.Matches, s.Caps.MaxLineBytes))
			}
			return v, nil
		},
		tools.WithRender(func(_ GrepArgs, v GrepValue) []tools.Content {
			return []tools.Content{tools.Text(FormatGrep(v, s.Caps))}
		}),
		tools.WithPresent(PresentGrep),
		tools.WithConcurrencySafe(func(GrepArgs) bool { return true }))
	glob := tools.Define("glob", strings.TrimSpace(globDescription),
		func(ctx context.Context, e *tools.Execution, args GlobArgs) (GlobValue, error) {
			dir := workdir.Of(ctx, e.Context(), cwd)
			v, err := s.Glob(ctx, dir, args)
			if err != nil {
				return v, toolError(err)
			}
			v = s.HideGlob(dir, v)
			if len(v.Paths) > s.Caps.MaxResults {
				v.Spill = save(ctx, c, e, "glob-results.txt", FullGlobText(v.Paths))
			}
			return v, nil
		},
		tools.WithRender(func(_ GlobArgs, v GlobValue) []tools.Content {
			return []tools.Content{tools.Text(FormatGlob(v, s.Caps))}
		}),
		tools.WithPresent(PresentGlob),
		tools.WithConcurrencySafe(func(GlobArgs) bool { return true }))
	return []*tools.Tool{grep, glob}
}

func toolError(err error) error {
	if se, ok := err.(*Error); ok {
		return &tools.Error{Name: se.ErrorName(), Code: se.ErrorCode(), Message: se.Message}
	}
	return err
}

// subprocessRunner runs ripgrep through the subprocess service: argv only,
// stdin ignored, stdout collected up to the raw-output cap, a stderr tail, and
// SIGTERM→grace→SIGKILL of the process group when ctx ends. When the
// runtime's default sandbox policy is on, ripgrep runs in a read-only
// sandbox with that policy's denyRead (denied files read as empty, so they
// never match) and no network.
type subprocessRunner struct{ rt *subprocess.Runtime }

// readOnlySandbox is the runtime's default policy turned read-only, or nil
// when the default is off.
func readOnlySandbox(rt *subprocess.Runtime) *subprocess.SandboxPolicy {
	p := rt.SandboxPolicy()
	if !p.Enabled() {
		return nil
	}
	p.Mode, p.Network, p.WritableRoots = subprocess.SandboxReadOnly, subprocess.SandboxNetwork{}, nil
	return &p
}

func (r subprocessRunner) Run(ctx context.Context, argv []string, dir string, caps Caps) (RunResult, error) {
	res, err := r.rt.Run(subprocess.Spec{
		Sandbox: readOnlySandbox(r.rt),
		Context: ctx,
		Argv:    argv,
		Dir:     dir,
		Stdin:   subprocess.IgnoreStdin(),
		Stdout:  subprocess.Collect(int64(caps.RawOutputMaxBytes)),
		Stderr:  subprocess.Collect(int64(caps.StderrMaxBytes)),
		Grace:   caps.Grace,
	})
	if err != nil {
		return RunResult{}, err
	}
	out, errOut := res.Stdout.ReadFrom(0), res.Stderr.ReadFrom(0)
	rr := RunResult{Stdout: []byte(out.Text), StdoutLossy: out.Lossy, Stderr: errOut.Text, StderrLossy: errOut.Lossy, ExitCode: -1, Signal: res.Outcome.Signal}
	if res.Outcome.ExitCode != nil {
		rr.ExitCode = *res.Outcome.ExitCode
	}
	return rr, nil
}

func addGuidance(c *core.Context) error {
	sp, ok := core.Lookup(c, systemprompt.Key)
	if !ok {
		return nil
	}
	for _, s := range []systemprompt.Section{
		{Name: "tool:glob", Order: systemprompt.SectionOrder(systemprompt.OrderToolGlob), Text: strings.TrimSpace(globGuidance), Interpolate: systemprompt.InterpolateOff},
		{Name: "tool:grep", Order: systemprompt.SectionOrder(systemprompt.OrderToolGrep), Text: strings.TrimSpace(grepGuidance), Interpolate: systemprompt.InterpolateOff},
	} {
		if _, err := sp.Section(c, s); err != nil {
			return err
		}
	}
	return nil
}

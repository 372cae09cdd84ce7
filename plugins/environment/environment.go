// Package environment is the environment plugin: it tells the model where
// it runs, as dsh and codex do — the working directory, whether it is a git
// repository (branch and a short, bounded `git status` summary), the
// operating system and shell, and today's date.
//
// The facts that do not change within a session (directory, repository,
// platform, shell) form the prompt section [SectionName], computed once per
// working directory and then served from memory: the system prompt stays
// byte-identical from step to step, so the provider's prompt cache holds.
// The git status is therefore a snapshot taken when the directory was first
// seen, and says so. The date is a runtime-context entry ([ContextName]):
// the agent sends the runtime-context snapshot as a user message only when
// it changed, so a session that crosses midnight gets one short message,
// and the system prompt is not touched.
//
// git runs through the subprocess service (credentials scrubbed, process
// group terminated on timeout) when one is mounted; without it the section
// says only whether the directory is inside a repository.
package environment

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/systemprompt"
)

// Names of what the plugin registers.
const (
	SectionName = "environment"
	ContextName = "environment:date"
)

// Config is the environment plugin's configuration.
type Config struct {
	// GitStatus includes a `git status --short` summary (default true).
	GitStatus bool `yaml:"gitStatus" jsonschema:"default=true"`
	// MaxStatusLines bounds the status summary (default 20 entries; the
	// rest are counted).
	MaxStatusLines int `yaml:"maxStatusLines" jsonschema:"minimum=0,default=20"`
	// Date tells the model today's date in the runtime context, re-sent only
	// when it changes (default true).
	Date bool `yaml:"date" jsonschema:"default=true"`
}

// SetDefaults turns everything on with 20 status lines.
func (c *Config) SetDefaults() { c.GitStatus, c.Date, c.MaxStatusLines = true, true, 20 }

// Validate checks the bound.
func (c Config) Validate() error {
	if c.MaxStatusLines < 0 {
		return &core.ConfigError{Issues: []core.Issue{{Path: "maxStatusLines", Message: "must not be negative"}}}
	}
	return nil
}

// Plugin registers the environment section and the date context.
var Plugin = core.Define("environment", apply,
	core.WithInject(systemprompt.Key.Name()),
	core.WithDescription("tells the model its working directory, git state, OS, shell and today's date"))

func apply(c *core.Context, cfg Config) error {
	sp := core.Use(c, systemprompt.Key)
	f := &Facts{cfg: cfg, cache: map[string]string{}, now: time.Now}
	if rt, ok := core.Lookup(c, subprocess.Key); ok {
		f.git = func(ctx context.Context, dir string) (string, bool) { return runGit(ctx, rt, dir) }
	}
	if _, err := sp.Section(c, systemprompt.Section{
		Name: SectionName, Order: systemprompt.SectionOrder(systemprompt.OrderHarnessSource), Interpolate: systemprompt.InterpolateOff,
		TextFunc: func(ctx context.Context, ac systemprompt.AssembleContext) (string, error) {
			return f.Section(ctx, cwdOf(ac)), nil
		},
	}); err != nil {
		return err
	}
	if !cfg.Date {
		return nil
	}
	_, err := sp.Context(c, systemprompt.PromptContext{
		Name: ContextName, Order: 100,
		TextFunc: func(context.Context, systemprompt.AssembleContext) (string, error) {
			return "Today's date: " + f.now().Format("2006-01-02 (Monday)") + ".", nil
		},
	})
	return err
}

// cwdOf returns the agent session's working directory (its handle has a
// Cwd method), else the process's.
func cwdOf(ac systemprompt.AssembleContext) string {
	if a, ok := ac.Agent.(interface{ Cwd() string }); ok && a.Cwd() != "" {
		return a.Cwd()
	}
	wd, _ := os.Getwd()
	return wd
}

// Facts computes and caches the environment section per directory.
type Facts struct {
	cfg Config
	git func(ctx context.Context, dir string) (porcelain string, ok bool)
	now func() time.Time

	mu    sync.Mutex
	cache map[string]string
}

// Section returns the environment text for dir, computed on first use and
// then the same string for the life of the plugin.
func (f *Facts) Section(ctx context.Context, dir string) string {
	f.mu.Lock()
	text, ok := f.cache[dir]
	f.mu.Unlock()
	if ok {
		return text
	}
	text = f.compute(ctx, dir)
	f.mu.Lock()
	if len(f.cache) >= 64 {
		clear(f.cache)
	}
	if prev, ok := f.cache[dir]; ok {
		text = prev // a concurrent first use won: keep one text
	} else {
		f.cache[dir] = text
	}
	f.mu.Unlock()
	return text
}

func (f *Facts) compute(ctx context.Context, dir string) string {
	var b strings.Builder
	b.WriteString("# Environment\n\n")
	fmt.Fprintf(&b, "Working directory: %s\n", dir)
	root := repoRoot(dir)
	switch {
	case root == "":
		b.WriteString("Git repository: no\n")
	default:
		fmt.Fprintf(&b, "Git repository: yes (top level %s)\n", root)
		if f.git != nil && f.cfg.GitStatus {
			if out, ok := f.git(ctx, dir); ok {
				writeStatus(&b, out, f.cfg.MaxStatusLines)
			}
		}
	}
	fmt.Fprintf(&b, "Platform: %s/%s\n", runtime.GOOS, runtime.GOARCH)
	shell := os.Getenv("SHELL")
	if shell == "" {
		shell = "/bin/sh"
	}
	fmt.Fprintf(&b, "Shell: %s (the bash tool runs bash)\n", shell)
	return b.String()
}

// writeStatus writes the branch and at most max entries of porcelain v1
// output (`git status --porcelain --branch`).
func writeStatus(b *strings.Builder, out string, limit int) {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) > 0 && strings.HasPrefix(lines[0], "## ") {
		branch := strings.TrimPrefix(lines[0], "## ")
		fmt.Fprintf(b, "Branch: %s\n", branch)
		lines = lines[1:]
	}
	if len(lines) == 1 && lines[0] == "" {
		lines = nil
	}
	if len(lines) == 0 {
		b.WriteString("Git status when the session started: clean\n")
		return
	}
	fmt.Fprintf(b, "Git status when the session started (%d changed or untracked paths; it may have changed since):\n", len(lines))
	for i, l := range lines {
		if i == limit {
			fmt.Fprintf(b, "  … and %d more\n", len(lines)-limit)
			break
		}
		fmt.Fprintf(b, "  %s\n", l)
	}
}

// repoRoot returns the nearest ancestor of dir holding a .git entry, or "".
func repoRoot(dir string) string {
	for d := filepath.Clean(dir); ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		p := filepath.Dir(d)
		if p == d {
			return ""
		}
		d = p
	}
}

// maxGitOutput bounds what is read of git's output (bytes).
const maxGitOutput = 64 << 10

// safeGit are the options of every git the harness runs in a repository
// the agent may have written to: no program the repository configures runs
// (core.fsmonitor, hooks, external diff drivers); see [filterOverrides] for
// clean filters.
var safeGit = []string{"-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "diff.external=", "-c", "core.quotepath=off"}

// gitEnv is the environment of those git runs: no system configuration,
// no optional locks.
var gitEnv = map[string]string{"GIT_OPTIONAL_LOCKS": "0", "GIT_CONFIG_NOSYSTEM": "1"}

// runGit runs `git status --porcelain --branch` in dir through the
// subprocess service, bounded in time and output. The repository's
// configuration is the agent's to write (.git/config), so git runs with
// [safeGit] and every clean filter or filter process the configuration
// names set to empty: git status runs a file's clean filter to compare
// its content, and that would run a program the agent chose outside
// the sandbox.
func runGit(ctx context.Context, rt *subprocess.Runtime, dir string) (string, bool) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	filters, ok := filterOverrides(ctx, rt, dir)
	if !ok {
		return "", false
	}
	res, err := git(ctx, rt, dir, append(filters, "status", "--porcelain", "--branch", "--untracked-files=normal")...)
	if err != nil || res.Outcome.ExitCode == nil || *res.Outcome.ExitCode != 0 || res.Stdout.Truncated() {
		return "", false // a status too long to read whole is left out
	}
	return res.Stdout.Text(), true
}

// git runs git with safeGit and args in dir through the subprocess
// service: environment gitEnv, no stdin, stdout kept up to maxGitOutput.
func git(ctx context.Context, rt *subprocess.Runtime, dir string, args ...string) (subprocess.Result, error) {
	return rt.Run(subprocess.Spec{
		Context: ctx,
		Argv:    append(append([]string{"git"}, safeGit...), args...),
		Dir:     dir,
		Env:     gitEnv,
		Stdin:   subprocess.IgnoreStdin(),
		Stdout:  subprocess.Collect(maxGitOutput),
		Stderr:  subprocess.Collect(4096),
		Grace:   time.Second,
	})
}

// filterOverrides lists the filter drivers' commands the configuration
// seen in dir names (`git config --get-regexp`, which runs no program) and
// returns `-c KEY=` for each, which disables it. Not ok when git cannot
// list them (then no status is taken).
func filterOverrides(ctx context.Context, rt *subprocess.Runtime, dir string) ([]string, bool) {
	res, err := git(ctx, rt, dir, "config", "-z", "--includes", "--name-only", "--get-regexp", `^filter\..*\.(clean|process|smudge)$`)
	if err != nil || res.Outcome.ExitCode == nil || res.Stdout.Truncated() {
		return nil, false
	}
	switch *res.Outcome.ExitCode {
	case 0:
	case 1: // no such key
		return nil, true
	default:
		return nil, false
	}
	var out []string
	for _, key := range strings.Split(res.Stdout.Text(), "\x00") {
		if key = strings.TrimSpace(key); key != "" {
			out = append(out, "-c", key+"=")
		}
	}
	return out, true
}

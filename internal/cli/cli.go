// Package cli is the `harness` command line (cobra). The root package's
// harness.Main runs it; custom binaries get the same commands.
//
// Each command lives in its own file; the subcommands list in this file
// names them all. Commands that need the configured harness call [Env.Boot],
// which discovers and composes the manifest (package discovery: --config,
// $HARNESS_CONFIG, the nearest harness.yml up to the repository root, else
// the embedded default; then every --patch), builds the
// fx app and starts it. Errors carry exit codes (see [ExitError]): 0 ok, 1
// runtime failure, 2 usage or configuration error, 3 a refused tool call
// under run --strict, 4 a turn the budget stopped, 130 interrupted.
package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/dshgo/harness/internal/discovery"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/spf13/cobra"
)

// Exit codes.
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 2
	ExitDenied      = 3 // run --strict: a permission decision refused a tool call
	ExitBudget      = 4 // run: the budget (--max-cost, --max-tokens, agent.budget) stopped the turn
	ExitPlan        = 5 // run: in plan mode, the turn ended on a plan no one could approve (printed)
	ExitInterrupted = 130
)

// ExitError is an error with the process exit code it maps to.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *ExitError) Unwrap() error { return e.Err }

// UsageError marks err as a usage or configuration error (exit 2).
func UsageError(err error) error { return &ExitError{Code: ExitUsage, Err: err} }

// Failure marks err as a runtime failure (exit 1).
func Failure(err error) error { return &ExitError{Code: ExitFailure, Err: err} }

// Env is what commands share: standard streams, the embedded default
// manifest, the plugins of the binary besides core.Registered(), and the
// global flags.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// DefaultManifest is the embedded harness.yml used when no file is found.
	DefaultManifest []byte
	// DefaultPatches are composed over DefaultManifest, in order, when it
	// is used (a binary's embedded rows: harness.WithPatch); a manifest
	// file replaces both.
	DefaultPatches []*manifest.Patch
	// Plugins are added to the catalog besides core.Registered(): the
	// binary's built-in plugins (plugins/std), or a test's plugins.
	Plugins []core.Plugin
	// LookupEnv reads the environment (os.LookupEnv by default).
	LookupEnv func(string) (string, bool)
	// Getwd returns the working directory (os.Getwd by default): where
	// harness.yml discovery starts and the sessions' directory, unless
	// --cwd names another.
	Getwd func() (string, error)

	// Global flags.
	ConfigPath string
	Patches    []string
	LogLevel   string
	// NoClaudeSettings turns off the Claude Code settings layer
	// (--no-claude-settings; also HARNESS_CLAUDE_SETTINGS=0).
	NoClaudeSettings bool

	// logw, when set, receives the log lines instead of Stderr (the text
	// printer's writer, which keeps its status line below them).
	logw io.Writer

	// cwd is --cwd made absolute ("" without it): the session's working
	// directory and where discovery starts; the process never changes
	// directory.
	cwd string
	// layers are what the last LoadManifest composed.
	layers []Layer

	// claudeUsed lists the Claude Code settings files the last
	// LoadManifest applied.
	claudeUsed []string
	// claudeWarned holds the Claude Code settings warnings already printed
	// (each is printed once per process, however often the manifest is
	// loaded again).
	claudeWarnMu sync.Mutex
	claudeWarned map[string]bool

	// Ctx is cancelled on the first SIGINT, SIGTERM or SIGHUP.
	Ctx context.Context
	// Interrupted reports whether a signal cancelled Ctx.
	Interrupted func() bool
}

// subcommands builds every subcommand of the root, in the order of
// docs/cli.md: the one list of the command line (a new command is a
// function of its own file, added here).
var subcommands = []func(*Env) *cobra.Command{
	runCommand, chatCommand, promptCommand, acpCommand,
	checkCommand, configCommand, schemaCommand, pluginsCommand, toolsCommand, toolCommand,
	sandboxCommand, sessionsCommand, logsCommand, rewindCommand, compactCommand, tokensCommand,
	agentsCommand, mcpCommand, worktreeCommand, serveCommand,
	workerCommand, submitCommand, jobsCommand, jobRunCommand,
	versionCommand,
}

// NewRoot builds the root command with every subcommand of subcommands.
func NewRoot(env *Env) *cobra.Command {
	root := &cobra.Command{
		Use:           "harness",
		Short:         "Run AI agents composed from plugins",
		Long:          "harness runs a local AI agent built from plugins listed in harness.yml.\nSee docs/cli.md for every command.",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version,
	}
	root.SetVersionTemplate("harness {{.Version}}\n")
	root.PersistentFlags().StringVarP(&env.ConfigPath, "config", "c", "", "manifest file (default: $HARNESS_CONFIG, else the nearest harness.yml from the working directory up to the repository root, else the embedded default)")
	root.PersistentFlags().StringArrayVar(&env.Patches, "patch", nil, "patch layer applied over the manifest (repeatable)")
	root.PersistentFlags().StringVar(&env.LogLevel, "log-level", "warn", "log level: debug, info, warn or error")
	root.PersistentFlags().BoolVar(&env.NoClaudeSettings, "no-claude-settings", false, "do not read Claude Code settings (~/.claude/settings.json, .claude/settings.json, .claude/settings.local.json)")
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return UsageError(err) })
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		var lvl slog.Level
		if err := lvl.UnmarshalText([]byte(env.LogLevel)); err != nil {
			return UsageError(fmt.Errorf("--log-level %q: want debug, info, warn or error", env.LogLevel))
		}
		return nil
	}
	for _, build := range subcommands {
		root.AddCommand(build(env))
	}
	rootRunsChat(env, root)
	return root
}

// Run executes the CLI with args (without the program name) and returns
// the exit code. Errors are printed to env.Stderr as "harness: ...".
func Run(args []string, env *Env) int {
	if env.Stdin == nil {
		env.Stdin = os.Stdin
	}
	if env.Stdout == nil {
		env.Stdout = os.Stdout
	}
	if env.Stderr == nil {
		env.Stderr = os.Stderr
	}
	if env.LookupEnv == nil {
		env.LookupEnv = os.LookupEnv
	}
	if env.Getwd == nil {
		env.Getwd = os.Getwd
	}
	if env.Ctx == nil {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
		defer stop()
		env.Ctx = ctx
		env.Interrupted = func() bool { return ctx.Err() != nil }
	}
	if env.Interrupted == nil {
		env.Interrupted = func() bool { return false }
	}
	root := NewRoot(env)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(env.Ctx)
	if err == nil {
		if !env.Interrupted() || (cmd != nil && cmd.Annotations[signalStopsAnnotation] != "") {
			return ExitOK
		}
		// A command that returned normally after SIGINT, SIGTERM or
		// SIGHUP cut its work short: exit 130 all the same (M4).
		err = errInterrupted()
	}
	code := ExitFailure
	var xe *ExitError
	if errors.As(err, &xe) {
		code = xe.Code
	} else if strings.HasPrefix(err.Error(), "unknown command") || strings.HasPrefix(err.Error(), "unknown flag") ||
		strings.Contains(err.Error(), "arg(s)") || strings.HasPrefix(err.Error(), "invalid argument") {
		code = ExitUsage
	}
	if env.Interrupted() && code != ExitUsage {
		code = ExitInterrupted
	}
	if !errors.Is(err, errSilent) {
		fmt.Fprintf(env.Stderr, "harness: %v\n", err)
	}
	return code
}

// signalStopsAnnotation marks a command that runs until a signal and
// treats it as its normal end (serve, worker, logs -f, sessions follow):
// it exits 0 after SIGINT or SIGTERM, as docs/cli.md says; chat (and
// `harness` alone) handles signals itself and decides. Every other
// command exits 130 when interrupted, even if it returned no error.
const signalStopsAnnotation = "harness:signal-stops"

// signalStops marks cmd with signalStopsAnnotation and returns it.
func signalStops(cmd *cobra.Command) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[signalStopsAnnotation] = "yes"
	return cmd
}

// errInterrupted is the error of a command cut short by a signal: exit 130,
// "harness: interrupted".
func errInterrupted() error {
	return &ExitError{Code: ExitInterrupted, Err: errors.New("interrupted")}
}

// Main runs the CLI on os.Args and exits. defaultManifest is the embedded
// harness.yml; plugins are the binary's built-in plugins (third-party ones
// come from core.Registered()).
func Main(defaultManifest []byte, plugins ...core.Plugin) {
	os.Exit(Run(os.Args[1:], &Env{DefaultManifest: defaultManifest, Plugins: plugins}))
}

// Logger returns a stderr logger at the --log-level.
func (e *Env) Logger() *slog.Logger {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(e.LogLevel)); err != nil {
		lvl = slog.LevelWarn
	}
	w := e.Stderr
	if e.logw != nil {
		w = e.logw
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lvl}))
}

// Names of the files configuration discovery looks for.
const (
	// ProjectManifest is the project's manifest (discovery.ProjectManifest).
	ProjectManifest = discovery.ProjectManifest
	// ProjectPatch is the project's patch layer (discovery.ProjectPatch).
	ProjectPatch = discovery.ProjectPatch
)

// Layer is one file (or the embedded default) the manifest was composed
// from, in order, as `harness check` reports it.
type Layer = discovery.Layer

// workDir is the directory discovery starts from: --cwd when given, else
// the process's working directory.
func (e *Env) workDir() (string, error) {
	if e.cwd != "" {
		return e.cwd, nil
	}
	return e.Getwd()
}

// shortPath shows p relative to the process's working directory when it
// lies there or below and --cwd is not in use (messages then say
// "harness.yml:3:1"), else absolute.
func (e *Env) shortPath(p string) string {
	if p == "" || e.cwd != "" {
		return p
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return rel
		}
	}
	return p
}

// discoveryOptions are the command line's discovery options: its flags,
// its default manifest and patches, its environment; settings warnings go
// to stderr (or the log file), once per process.
func (e *Env) discoveryOptions() (discovery.Options, error) {
	wd, err := e.workDir()
	if err != nil {
		return discovery.Options{}, err
	}
	return discovery.Options{
		Dir:              wd,
		ConfigPath:       e.ConfigPath,
		Patches:          e.Patches,
		DefaultManifest:  e.DefaultManifest,
		DefaultPatches:   e.DefaultPatches,
		NoClaudeSettings: e.NoClaudeSettings,
		LookupEnv:        e.LookupEnv,
		Warn:             e.warnOnce,
		Logger:           e.Logger(),
		ShortPath:        e.shortPath,
	}, nil
}

// warnOnce prints "harness: warning: MSG" once per process.
func (e *Env) warnOnce(msg string) {
	e.claudeWarnMu.Lock()
	if e.claudeWarned == nil {
		e.claudeWarned = map[string]bool{}
	}
	seen := e.claudeWarned[msg]
	e.claudeWarned[msg] = true
	e.claudeWarnMu.Unlock()
	if seen {
		return
	}
	w := e.Stderr
	if e.logw != nil {
		w = e.logw
	}
	if w != nil {
		fmt.Fprintf(w, "harness: warning: %s\n", msg)
	}
}

// ManifestPath returns the manifest file to read ("" for the embedded
// default) following the discovery order: --config, $HARNESS_CONFIG, the
// nearest harness.yml from the working directory up to the repository
// root.
func (e *Env) ManifestPath() string {
	o, err := e.discoveryOptions()
	if err != nil {
		return ""
	}
	return discovery.ManifestPath(o)
}

// UserPatchPath returns the user's patch layer,
// $XDG_CONFIG_HOME/harness/harness.yml (else ~/.config/harness/harness.yml,
// HOME read through LookupEnv), when that file exists; else "".
func (e *Env) UserPatchPath() string { return discovery.UserPatchPath(e.LookupEnv) }

// Layers returns what the last LoadManifest composed, in order.
func (e *Env) Layers() []Layer { return slices.Clone(e.layers) }

// LoadManifest discovers, parses and composes the manifest with its patch
// layers (package discovery, the path harness.New's WithDiscovery takes
// too), in this order: the manifest (--config, $HARNESS_CONFIG, the
// project's harness.yml, else the embedded default with the binary's
// patches), the project's harness.patch.yml, the user's patch file, every
// --patch, then the Claude Code settings layer. Errors are usage errors
// naming FILE:LINE:COL.
func (e *Env) LoadManifest() (*manifest.Manifest, error) {
	o, err := e.discoveryOptions()
	if err != nil {
		return nil, UsageError(err)
	}
	res, err := discovery.Load(o)
	if err != nil {
		return nil, UsageError(err)
	}
	e.layers = res.Layers
	e.claudeUsed = res.ClaudeSettings
	return res.Manifest, nil
}

// ReloadManifest is LoadManifest for a running harness booted with opts:
// it conceals the new manifest's credential variables from children and
// applies opts' manifest changes (--yes swaps the approval row), so the
// result reconciles onto that harness without undoing them.
func (e *Env) ReloadManifest(opts ...BootOption) (*manifest.Manifest, error) {
	o, err := e.bootOptions(opts)
	if err != nil {
		return nil, err
	}
	return o.Manifest, nil
}

// ManifestFiles lists the files the manifest is read from (the manifest
// itself, unless it is the embedded default, the project and user patch
// files, every --patch, the Claude Code settings files): what a
// long-running mode watches.
func (e *Env) ManifestFiles() []string {
	o, err := e.discoveryOptions()
	if err != nil {
		return nil
	}
	return discovery.Files(o)
}

// BootOption adjusts [Env.Boot]. The interface is sealed.
type BootOption interface{ applyBoot(*fxcore.Options) }

type bootOptionFunc func(*fxcore.Options)

func (f bootOptionFunc) applyBoot(o *fxcore.Options) { f(o) }

// SkipAudit boots even when some rows do not activate.
func SkipAudit() BootOption { return bootOptionFunc(func(o *fxcore.Options) { o.SkipAudit = true }) }

// bootOptions loads the manifest and makes the harness options opts
// adjust. Children never inherit the variables the manifest reads
// credentials from (B10), whatever their names.
func (e *Env) bootOptions(opts []BootOption) (fxcore.Options, error) {
	m, err := e.LoadManifest()
	if err != nil {
		return fxcore.Options{}, err
	}
	subprocess.ConcealEnv(m.CredentialEnv()...)
	o := fxcore.Options{Manifest: m, Env: e.LookupEnv, Logger: e.Logger(), Plugins: slices.Clone(e.Plugins)}
	for _, opt := range opts {
		opt.applyBoot(&o)
	}
	return o, nil
}

// Build loads the manifest and builds (without starting) the harness.
func (e *Env) Build(opts ...BootOption) (*fxcore.Harness, error) {
	h, _, err := e.build(opts)
	return h, err
}

// build is Build that also returns the manifest the harness was built
// from.
func (e *Env) build(opts []BootOption) (*fxcore.Harness, *manifest.Manifest, error) {
	o, err := e.bootOptions(opts)
	if err != nil {
		return nil, nil, err
	}
	h, err := fxcore.New(o)
	if err != nil {
		return nil, nil, Failure(err)
	}
	return h, o.Manifest, nil
}

// Boot builds and starts the configured harness. Manifest, config and
// boot-audit errors are usage errors (exit 2). Stop it with
// h.Stop(context.Background()).
func (e *Env) Boot(opts ...BootOption) (*fxcore.Harness, error) {
	h, err := e.Build(opts...)
	if err != nil {
		return nil, err
	}
	if err := h.Start(e.Ctx); err != nil {
		return nil, UsageError(err)
	}
	// MCP servers connect in the background: the commands that use them
	// wait (awaitMCP); the others never do.
	return h, nil
}

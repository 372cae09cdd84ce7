// Package harness composes AI-agent harnesses out of plugins and runs them.
//
// A harness is a set of plugins mounted from a manifest, harness.yml, on the
// runtime in package core. This package is the entry point for binaries:
//
//	func main() { harness.Main() }
//
// is the whole `harness` command; a custom binary imports third-party plugin
// packages for their side effect (each calls [core.Register] from init) and
// calls the same Main (the Caddy/xcaddy model). [New] builds a harness
// in-process for tests and embedding. The default manifest is embedded
// ([DefaultManifest]) and used when no harness.yml is found.
//
// A binary's plugin catalog has two sources, one per kind of plugin: the
// built-in plugins listed in package plugins/std, and third-party plugins
// that called [core.Register] from init. [WithPlugins] adds plugins to one
// in-process harness (tests, embedding).
package harness

import (
	_ "embed"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/internal/cli"
	"github.com/dshgo/harness/internal/discovery"
	"github.com/dshgo/harness/plugins/std"
	"github.com/dshgo/harness/services/subprocess"
)

// DefaultManifest is the embedded default harness.yml. [Main] and [New]
// read it when called; a binary that ships another default passes
// [WithManifest] (or [WithPatch] for the defaults plus its own rows) rather
// than assigning it.
//
//go:embed harness.yml
var DefaultManifest []byte

// Main runs the harness command line with os.Args and exits with its code.
// The catalog is the built-in plugins (plugins/std) plus every plugin
// registered with [core.Register] and those of [WithPlugins].
//
// The options shape the binary's default manifest, the one used when no
// harness.yml is found (no --config, no $HARNESS_CONFIG, no ./harness.yml):
// [WithManifest] replaces the embedded [DefaultManifest], and each
// [WithPatch] layer is composed over it. So a custom binary ships the
// default rows plus its own with
//
//	//go:embed wordcount.patch.yml
//	var rows []byte
//
//	func main() { harness.Main(harness.WithPatch("wordcount.patch.yml", rows)) }
//
// where the patch inserts its rows and extends lists with `!append`
// (docs/manifest.md). A harness.yml on disk replaces the whole default,
// embedded patches included (`harness config` prints the composed default to
// start one from). The file, logger and environment options of [New]
// ([WithConfigFile], [WithPatchFiles], [WithLogger], [WithEnv]) are the
// command line's business (--config, --patch, --log-level): Main exits with
// status 2 naming the option if given one. An embedded patch that does not
// parse or compose is reported as `NAME:LINE:COL: ...` with status 2.
func Main(opts ...Option) {
	o := options{}
	for _, opt := range opts {
		opt.applyHarness(&o)
	}
	os.Exit(runMain(os.Args[1:], os.Stdout, os.Stderr, o))
}

// runMain is Main without the exit: the checks of its options, then the
// command line with args; it returns the exit code.
func runMain(args []string, stdout, stderr io.Writer, o options) int {
	if bad := o.nonMainOptions(); bad != "" {
		fmt.Fprintf(stderr, "harness: %s is not an option of harness.Main (use the command line's --config, --patch, --log-level)\n", bad)
		return cli.ExitUsage
	}
	def := DefaultManifest
	if o.yaml != nil {
		def = o.yaml
	}
	patches, err := o.embeddedPatches()
	if err != nil {
		fmt.Fprintf(stderr, "harness: %v\n", err)
		return cli.ExitUsage
	}
	return cli.Run(args, &cli.Env{
		Stdout:          stdout,
		Stderr:          stderr,
		DefaultManifest: def,
		DefaultPatches:  patches,
		Plugins:         append(std.Plugins(), o.plugins...),
	})
}

// nonMainOptions names the first option given that Main does not take.
func (o *options) nonMainOptions() string {
	switch {
	case o.file != "":
		return "WithConfigFile"
	case o.patches != nil:
		return "WithPatchFiles"
	case o.logger != nil:
		return "WithLogger"
	case o.env != nil:
		return "WithEnv"
	}
	return ""
}

// embeddedPatches parses the WithPatch layers.
func (o *options) embeddedPatches() ([]*manifest.Patch, error) {
	var out []*manifest.Patch
	for _, p := range o.embedded {
		pt, err := manifest.ParsePatch(p.name, p.yaml)
		if err != nil {
			return nil, err
		}
		out = append(out, pt)
	}
	return out, nil
}

// Option configures [New]. The interface is sealed: the options are the
// With* functions of this package.
type Option interface{ applyHarness(*options) }

type optionFunc func(*options)

func (f optionFunc) applyHarness(o *options) { f(o) }

type options struct {
	file     string
	yaml     []byte
	patches  []string
	logger   *slog.Logger
	plugins  []core.Plugin
	env      manifest.LookupEnv
	embedded []embeddedPatch
	discover *string
}

type embeddedPatch struct {
	name string
	yaml []byte
}

// WithConfigFile reads the manifest from path.
func WithConfigFile(path string) Option { return optionFunc(func(o *options) { o.file = path }) }

// WithManifest uses the given harness.yml text (named "harness.yml" in
// errors) instead of the embedded [DefaultManifest]. With [Main] it is the
// binary's default manifest.
func WithManifest(yaml []byte) Option { return optionFunc(func(o *options) { o.yaml = yaml }) }

// WithPatch composes a patch layer given as text (typically embedded
// with go:embed) over the default manifest: the embedded [DefaultManifest], or
// the one of [WithManifest]. name is the file name errors report
// (`name:LINE:COL`). Layers apply in the order given, before any
// [WithPatchFiles] (or --patch) layer; a config file ([WithConfigFile],
// --config, ./harness.yml) replaces the default and its embedded layers.
// The patch syntax, including `!append` to extend a list, is in
// docs/manifest.md.
func WithPatch(name string, yaml []byte) Option {
	return optionFunc(func(o *options) { o.embedded = append(o.embedded, embeddedPatch{name, yaml}) })
}

// WithDiscovery makes [New] find its configuration from dir the way the
// harness command does there (package internal/discovery, the one path
// both take): the manifest ([WithConfigFile], $HARNESS_CONFIG, the nearest
// harness.yml from dir up to the repository root, else the default of
// [WithManifest] or [DefaultManifest] with the [WithPatch] layers), the
// project's harness.patch.yml, the user's patch file, the [WithPatchFiles]
// layers, then the Claude Code settings files (~/.claude/settings.json,
// dir's .claude/settings.json and .claude/settings.local.json; off with
// HARNESS_CLAUDE_SETTINGS=0). Variables are read through [WithEnv];
// settings warnings go to the [WithLogger] logger. dir "" is the working
// directory. Without this option New reads only what the options name.
func WithDiscovery(dir string) Option {
	return optionFunc(func(o *options) { o.discover = &dir })
}

// WithPatchFiles applies patch layers over the manifest, in order.
func WithPatchFiles(paths ...string) Option {
	return optionFunc(func(o *options) { o.patches = append(o.patches, paths...) })
}

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return optionFunc(func(o *options) { o.logger = l }) }

// WithPlugins adds plugins to the catalog of this harness only (tests,
// embedding), besides the built-in and registered ones.
func WithPlugins(ps ...core.Plugin) Option {
	return optionFunc(func(o *options) { o.plugins = append(o.plugins, ps...) })
}

// WithEnv sets how !env variables are read (default os.LookupEnv).
func WithEnv(env func(string) (string, bool)) Option {
	return optionFunc(func(o *options) { o.env = env })
}

// New builds a harness from the options (default: the embedded manifest,
// with the [WithPatch] layers composed over it).
// Start it with h.Start(ctx) and stop it with h.Stop(ctx); reach its
// services with core.Lookup(h.Root.Context(), key).
func New(opts ...Option) (*fxcore.Harness, error) {
	o := options{logger: slog.Default(), env: os.LookupEnv}
	for _, opt := range opts {
		opt.applyHarness(&o)
	}
	m, err := o.manifest()
	if err != nil {
		return nil, err
	}
	// Children never inherit the variables the harness reads credentials
	// from (B10), whatever their names.
	subprocess.ConcealEnv(m.CredentialEnv()...)
	plugins := append(std.Plugins(), o.plugins...)
	return fxcore.New(fxcore.Options{Manifest: m, Env: o.env, Logger: o.logger, Plugins: plugins})
}

// manifest builds New's manifest: by discovery with [WithDiscovery], else
// from what the options name.
func (o *options) manifest() (*manifest.Manifest, error) {
	if o.discover != nil {
		def := DefaultManifest
		if o.yaml != nil {
			def = o.yaml
		}
		embedded, err := o.embeddedPatches()
		if err != nil {
			return nil, err
		}
		res, err := discovery.Load(discovery.Options{
			Dir:             *o.discover,
			ConfigPath:      o.file,
			Patches:         o.patches,
			DefaultManifest: def,
			DefaultPatches:  embedded,
			LookupEnv:       o.env,
			Warn:            func(msg string) { o.logger.Warn(msg) },
			Logger:          o.logger,
		})
		if err != nil {
			return nil, err
		}
		return res.Manifest, nil
	}
	var m *manifest.Manifest
	var err error
	switch {
	case o.file != "":
		m, err = manifest.ReadFile(o.file)
	case o.yaml != nil:
		m, err = manifest.Parse("harness.yml", o.yaml)
	default:
		m, err = manifest.Parse("<embedded harness.yml>", DefaultManifest)
	}
	if err != nil {
		return nil, err
	}
	var patches []*manifest.Patch
	if o.file == "" {
		if patches, err = o.embeddedPatches(); err != nil {
			return nil, err
		}
	}
	for _, p := range o.patches {
		pt, err := manifest.ReadPatchFile(p)
		if err != nil {
			return nil, err
		}
		patches = append(patches, pt)
	}
	return manifest.Compose(m, patches...)
}

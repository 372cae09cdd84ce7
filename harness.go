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
	"log/slog"
	"os"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/internal/cli"
	"github.com/dshgo/harness/plugins/std"
	"github.com/dshgo/harness/services/subprocess"
)

// DefaultManifest is the embedded default harness.yml.
//
//go:embed harness.yml
var DefaultManifest []byte

// Main runs the harness command line with os.Args and exits with its code.
// The catalog is the built-in plugins (plugins/std) plus every plugin
// registered with [core.Register].
func Main() { cli.Main(DefaultManifest, std.Plugins()...) }

// Option configures [New]. The interface is sealed: the options are the
// With* functions of this package.
type Option interface{ applyHarness(*options) }

type optionFunc func(*options)

func (f optionFunc) applyHarness(o *options) { f(o) }

type options struct {
	file    string
	yaml    []byte
	patches []string
	logger  *slog.Logger
	plugins []core.Plugin
	env     manifest.LookupEnv
}

// WithConfigFile reads the manifest from path.
func WithConfigFile(path string) Option { return optionFunc(func(o *options) { o.file = path }) }

// WithManifest uses the given harness.yml text (named "harness.yml" in
// errors).
func WithManifest(yaml []byte) Option { return optionFunc(func(o *options) { o.yaml = yaml }) }

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

// New builds a harness from the options (default: the embedded manifest).
// Start it with h.Start(ctx) and stop it with h.Stop(ctx); reach its
// services with core.Lookup(h.Root.Context(), key).
func New(opts ...Option) (*fxcore.Harness, error) {
	o := options{logger: slog.Default(), env: os.LookupEnv}
	for _, opt := range opts {
		opt.applyHarness(&o)
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
	for _, p := range o.patches {
		pt, err := manifest.ReadPatchFile(p)
		if err != nil {
			return nil, err
		}
		patches = append(patches, pt)
	}
	if m, err = manifest.Compose(m, patches...); err != nil {
		return nil, err
	}
	// Children never inherit the variables the harness reads credentials
	// from (B10), whatever their names.
	subprocess.ConcealEnv(m.CredentialEnv()...)
	plugins := append(std.Plugins(), o.plugins...)
	return fxcore.New(fxcore.Options{Manifest: m, Env: o.env, Logger: o.logger, Plugins: plugins})
}

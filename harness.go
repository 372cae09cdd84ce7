// Package harness composes AI-agent harnesses out of plugins and runs them.
//
// A harness is a set of plugins mounted from a manifest, harness.yml, on the
// runtime in package core. This package is the entry point for binaries:
//
//	func main() { harness.Main() }
//
// is the whole `harness` command; a custom binary imports third-party plugin
// packages for their side effect (each calls [Register] from init) and calls
// the same Main (the Caddy/xcaddy model). [New] builds a harness in-process
// for tests and embedding. The default manifest is embedded
// ([DefaultManifest]) and used when no harness.yml is found.
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
	"go.uber.org/fx"
)

// DefaultManifest is the embedded default harness.yml.
//
//go:embed harness.yml
var DefaultManifest []byte

func init() {
	for _, p := range std.Plugins() {
		core.Register(p)
	}
}

// Register adds a plugin to the catalog of this binary, so harness.yml can
// mount it by name. Call it from an init function of the plugin's package.
// Two different plugins with one name panic at init (a programmer error).
func Register(p core.Plugin) { core.Register(p) }

// Main runs the harness command line with os.Args and exits with its code.
// modules are extra fx options, for example fxcore.ProvidePlugin(p).
func Main(modules ...fx.Option) { cli.Main(DefaultManifest, modules...) }

// Option configures [New].
type Option func(*options)

type options struct {
	file    string
	yaml    []byte
	patches []string
	logger  *slog.Logger
	modules []fx.Option
	plugins []core.Plugin
	env     manifest.LookupEnv
}

// WithConfigFile reads the manifest from path.
func WithConfigFile(path string) Option { return func(o *options) { o.file = path } }

// WithManifest uses the given harness.yml text (named "harness.yml" in
// errors).
func WithManifest(yaml []byte) Option { return func(o *options) { o.yaml = yaml } }

// WithPatchFiles applies patch layers over the manifest, in order.
func WithPatchFiles(paths ...string) Option {
	return func(o *options) { o.patches = append(o.patches, paths...) }
}

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithModules adds fx options, such as plugin modules.
func WithModules(m ...fx.Option) Option {
	return func(o *options) { o.modules = append(o.modules, m...) }
}

// WithPlugins adds plugins to the catalog of this harness only.
func WithPlugins(ps ...core.Plugin) Option {
	return func(o *options) { o.plugins = append(o.plugins, ps...) }
}

// WithEnv sets how !env variables are read (default os.LookupEnv).
func WithEnv(env func(string) (string, bool)) Option { return func(o *options) { o.env = env } }

// New builds a harness from the options (default: the embedded manifest).
// Start it with h.Start(ctx) and stop it with h.Stop(ctx); reach its
// services with core.Lookup(h.Root.Context(), key).
func New(opts ...Option) (*fxcore.Harness, error) {
	o := options{logger: slog.Default(), env: os.LookupEnv}
	for _, opt := range opts {
		opt(&o)
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
	return fxcore.New(fxcore.Options{Manifest: m, Env: o.env, Logger: o.logger, Plugins: o.plugins}, o.modules...)
}

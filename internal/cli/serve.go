package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/core/loader"
	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/plugins/web"
	"github.com/dshgo/harness/services/settings"
	"github.com/dshgo/harness/services/workspaces"
)

// serveFlags are the flags of `harness serve`.
type serveFlags struct {
	addr, tlsCert, tlsKey string
	allowRemote           bool
}

// serveCommand builds `harness serve`.
func serveCommand(env *Env) *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve [flags]",
		Short: "Serve the web app: workspaces, sessions, approvals and settings in a browser",
		Long: "serve boots the configured harness with the web plugin (and the workspaces plugin) and prints the\n" +
			"URL to open, with this start's access token. It binds to 127.0.0.1 by default; a non-loopback\n" +
			"--addr is refused unless --allow-remote is given with --tls-cert and --tls-key. The directory serve\n" +
			"runs in is added as a workspace. A change to harness.yml (or a --patch file) is applied while it\n" +
			"runs. SIGINT or SIGTERM stops it (running turns are cancelled). See docs/web.md.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return serve(cmd, env, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", "127.0.0.1:0", "listen address host:port (port 0: a free port)")
	fl.BoolVar(&f.allowRemote, "allow-remote", false, "permit a non-loopback --addr (requires --tls-cert and --tls-key)")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "PEM certificate file: serve HTTPS")
	fl.StringVar(&f.tlsKey, "tls-key", "", "PEM private key file")
	return signalStops(cmd)
}

func serve(cmd *cobra.Command, env *Env, f *serveFlags) error {
	cfg := web.Config{}
	cfg.SetDefaults()
	cfg.Addr, cfg.AllowRemote, cfg.TLSCert, cfg.TLSKey = f.addr, f.allowRemote, f.tlsCert, f.tlsKey
	if err := cfg.Validate(); err != nil {
		return UsageError(fmt.Errorf("serve: %w", err))
	}
	setFile := settings.DefaultFile()
	layer, err := settings.LoadPatch(setFile)
	if err != nil {
		return UsageError(fmt.Errorf("settings saved by the web app: %w", err))
	}
	if layer != nil {
		m, err := env.LoadManifest()
		if err != nil {
			return err
		}
		if _, err := manifest.Compose(m, layer); err != nil {
			return UsageError(fmt.Errorf("settings saved by the web app (%s) do not fit the manifest: %w", setFile, err))
		}
	}
	opt := withWeb(cmd, f, setFile)
	h, err := env.Boot(opt)
	if err != nil {
		return err
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10e9)
		defer cancel()
		_ = h.Stop(ctx)
	}()
	srv, ok := core.Lookup(h.Root.Context(), web.Key)
	if !ok {
		return Failure(errors.New("the web plugin is not active (`harness plugins` shows why)"))
	}
	// The settings service recomposes harness.yml (read afresh, with serve's
	// own rows) and the new settings file on every change, so a value reset
	// to null falls back to harness.yml's at once, as at the next start.
	base := withWeb(cmd, f, "")
	srv.UseSettings(settings.New(h.Loader, settings.Options{File: setFile, Catalog: h.Catalog,
		Base: func() (*manifest.Manifest, error) { return env.ReloadManifest(base) }}))
	if ws, ok := core.Lookup(h.Root.Context(), workspaces.Key); ok {
		if wd, err := os.Getwd(); err == nil {
			_, _ = ws.Add(wd, "")
		}
	}
	fmt.Fprintf(env.Stdout, "harness serve: open %s\n", srv.URL())
	// The command's context (env.Ctx) already ends on SIGINT/SIGTERM from
	// process start; a signal that arrives between the URL line and a
	// registration made here would otherwise be taken by that earlier one
	// and never stop the server.
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if files := env.ManifestFiles(); len(files) > 0 {
		w := h.Loader.Watcher(loader.WatchOptions{Paths: files,
			Load: func() (*manifest.Manifest, error) { return env.ReloadManifest(opt) },
			OnReload: func(err error) {
				if err != nil {
					fmt.Fprintf(env.Stderr, "harness: the changed configuration was not applied (the running one stays): %v\n", err)
				} else {
					fmt.Fprintln(env.Stderr, "harness: configuration reloaded")
				}
			}})
		go func() { _ = w.Run(ctx) }()
	}
	<-ctx.Done()
	fmt.Fprintln(env.Stderr, "harness serve: stopping")
	return nil
}

// withWeb layers the settings the web app saved (setFile; "" for none) over
// the manifest, adds a workspaces row and a web row when it has none, and sets
// the web row's address and TLS settings from the flags that were given (a
// web row of harness.yml keeps its other settings).
func withWeb(cmd *cobra.Command, f *serveFlags, setFile string) BootOption {
	return bootOptionFunc(func(o *fxcore.Options) {
		m := o.Manifest.Clone()
		if setFile != "" {
			if layer, err := settings.LoadPatch(setFile); err == nil && layer != nil {
				if composed, err := manifest.Compose(m, layer); err == nil {
					m = composed
				}
			}
		}
		has := func(name string) int {
			for i, e := range m.Plugins {
				if e.Name == name && !e.Disabled {
					return i
				}
			}
			return -1
		}
		if has(workspaces.Plugin.Name()) < 0 {
			m.Plugins = append(m.Plugins, manifest.Entry{ID: "workspaces", Name: workspaces.Plugin.Name()})
		}
		set := map[string]any{}
		fl := cmd.Flags()
		if fl.Changed("addr") || has(web.Plugin.Name()) < 0 {
			set["addr"] = f.addr
		}
		if fl.Changed("allow-remote") {
			set["allowRemote"] = f.allowRemote
		}
		if fl.Changed("tls-cert") {
			set["tlsCert"] = f.tlsCert
		}
		if fl.Changed("tls-key") {
			set["tlsKey"] = f.tlsKey
		}
		i := has(web.Plugin.Name())
		if i < 0 {
			m.Plugins = append(m.Plugins, manifest.Entry{ID: "web", Name: web.Plugin.Name()})
			i = len(m.Plugins) - 1
		}
		m.Plugins[i].Config = mergeNode(m.Plugins[i].Config, set)
		o.Manifest = m
	})
}

// mergeNode returns a mapping node: cfg (nil: empty) with the keys of set
// replaced or added.
func mergeNode(cfg *yaml.Node, set map[string]any) *yaml.Node {
	vals := map[string]any{}
	if cfg != nil {
		_ = cfg.Decode(&vals)
	}
	for k, v := range set {
		vals[k] = v
	}
	var n yaml.Node
	if err := n.Encode(vals); err != nil {
		return cfg
	}
	return &n
}

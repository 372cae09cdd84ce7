// Package fxcore is the one place where go.uber.org/fx meets the harness
// runtime. fx does the static part of a harness process: the logger, the
// plugin catalog ([core.Registered] plus [Options.Plugins]), the root, the
// loader and
// exactly two lifecycle hooks: OnStart applies the manifest and audits it,
// OnStop disposes the root. Everything dynamic (pending plugins, reloads,
// disposal) is core's.
//
// Start-up is bounded by the start timeout (manifest `startTimeout`, default
// 15 s). Unlike a plain fx app, whose OnStop hooks never run when a start
// times out (uber-go/fx#1035), a failed or timed-out start here aborts the
// Apply calls still running, disposes every plugin that did start (in
// reverse order, bounded by the stop timeout, default 5 s) and returns an
// error naming the plugins that were still applying.
package fxcore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/loader"
	"github.com/dshgo/harness/core/manifest"
	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"
)

// Default bounds on booting and disposing the plugin tree.
const (
	DefaultStartTimeout = 15 * time.Second
	DefaultStopTimeout  = 5 * time.Second
)

// Options configure a harness process.
type Options struct {
	// Manifest is the composed manifest to apply (required).
	Manifest *manifest.Manifest
	// Env reads !env variables (nil: the process environment).
	Env manifest.LookupEnv
	// Logger receives lifecycle records (nil: slog.Default()).
	Logger *slog.Logger
	// Plugins are added to the catalog besides core.Registered(): the
	// built-in list of the binary (plugins/std) and, in tests and embedding
	// hosts, plugins of this harness only.
	Plugins []core.Plugin
	// StartTimeout and StopTimeout override the manifest's and the defaults.
	StartTimeout, StopTimeout time.Duration
	// SkipAudit lets a boot succeed with pending or failed rows: they stay
	// mounted (see loader.Mount) so `harness plugins` can show them.
	SkipAudit bool
}

// Harness is a built (and, after Start, running) harness process.
type Harness struct {
	Root    *core.Root
	Loader  *loader.Loader
	Catalog *core.Catalog

	app          *fx.App
	opts         Options
	startTimeout time.Duration
	stopTimeout  time.Duration
}

// NewCatalog merges core.Registered() and extra plugins. The same
// definition arriving twice is fine; two plugins under one name is an error.
func NewCatalog(extra []core.Plugin) (*core.Catalog, error) {
	return core.NewCatalog(append(core.Registered(), extra...)...)
}

// New builds the fx app for opts. It fails if the fx graph is invalid or
// two different plugins share a name.
func New(opts Options) (*Harness, error) {
	if opts.Manifest == nil {
		return nil, errors.New("fxcore: no manifest")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	h := &Harness{opts: opts}
	h.startTimeout = firstPositive(opts.StartTimeout, opts.Manifest.StartTimeout, DefaultStartTimeout)
	h.stopTimeout = firstPositive(opts.StopTimeout, opts.Manifest.StopTimeout, DefaultStopTimeout)
	logger := opts.Logger
	fxOpts := []fx.Option{
		fx.WithLogger(func() fxevent.Logger {
			l := &fxevent.SlogLogger{Logger: logger}
			l.UseLogLevel(slog.LevelDebug)
			// fx's own failure records repeat the error the host returns
			// (and core already logged the failing plugin once).
			l.UseErrorLevel(slog.LevelDebug)
			// Every error fx logs (a failed hook, the rollback) is also
			// returned by New or Start, and the caller reports it once.
			l.UseErrorLevel(slog.LevelDebug)
			return l
		}),
		fx.RecoverFromPanics(),
		fx.Supply(logger),
		fx.Provide(
			func() (*core.Catalog, error) { return NewCatalog(opts.Plugins) },
			func(l *slog.Logger) *core.Root { return core.NewRoot(core.WithLogger(l), core.WithAbortableApply()) },
			func(r *core.Root, c *core.Catalog) *loader.Loader { return loader.New(r, c, opts.Env) },
		),
		fx.Invoke(func(lc fx.Lifecycle, r *core.Root, l *loader.Loader) {
			lc.Append(fx.Hook{OnStart: h.start, OnStop: h.stop})
		}),
		fx.Populate(&h.Root, &h.Loader, &h.Catalog),
	}
	h.app = fx.New(fxOpts...)
	if err := h.app.Err(); err != nil {
		return nil, err
	}
	return h, nil
}

func firstPositive(ds ...time.Duration) time.Duration {
	for _, d := range ds {
		if d > 0 {
			return d
		}
	}
	return 0
}

// Start boots the harness: applies the manifest, waits for it to settle and
// audits it (every enabled row active), all within the start timeout. On
// any failure every started plugin is disposed before Start returns.
func (h *Harness) Start(ctx context.Context) error { return h.app.Start(ctx) }

// Stop disposes the plugin tree within the stop timeout.
func (h *Harness) Stop(ctx context.Context) error { return h.app.Stop(ctx) }

// StartTimeoutError reports a boot that did not finish in time.
type StartTimeoutError struct {
	Timeout time.Duration
	// Applying names the plugins whose Apply was still running.
	Applying []string
}

func (e *StartTimeoutError) Error() string {
	s := fmt.Sprintf("start timeout: the plugin tree did not start within %s", e.Timeout)
	if len(e.Applying) > 0 {
		s += "; still applying: " + strings.Join(e.Applying, ", ")
	}
	return s
}

func (h *Harness) start(ctx context.Context) error {
	done := make(chan error, 1)
	go func() {
		// Every row is mounted, then audited, so a failed boot names each
		// failed row with its error and each pending one with what it waits
		// for (not only the first failure); a failed audit disposes the
		// whole tree below, in reverse order.
		err := h.Loader.Mount(context.Background(), h.opts.Manifest)
		if err == nil && !h.opts.SkipAudit {
			err = h.Loader.Audit()
		}
		done <- err
	}()
	timer := time.NewTimer(h.startTimeout)
	defer timer.Stop()
	var err error
	select {
	case err = <-done:
	case <-timer.C:
		te := &StartTimeoutError{Timeout: h.startTimeout}
		for _, f := range h.Root.Loading() {
			te.Applying = append(te.Applying, fmt.Sprintf("%s (fiber %d)", f.Plugin().Name(), f.ID()))
		}
		h.Root.Abort()
		select {
		case <-done:
		case <-time.After(h.stopTimeout):
		}
		err = te
	case <-ctx.Done():
		h.Root.Abort()
		<-done
		err = ctx.Err()
	}
	if err != nil {
		stopCtx, cancel := context.WithTimeout(context.Background(), h.stopTimeout)
		defer cancel()
		if derr := h.Root.Dispose(stopCtx); derr != nil {
			h.opts.Logger.Error("disposing after failed start", "error", derr)
		}
		return err
	}
	return nil
}

func (h *Harness) stop(ctx context.Context) error {
	stopCtx, cancel := context.WithTimeout(context.Background(), h.stopTimeout)
	defer cancel()
	return h.Root.Dispose(stopCtx)
}

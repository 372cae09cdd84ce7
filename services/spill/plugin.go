package spill

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/dshgo/harness/core"
)

// Key is the spill service key ("spillStore"). One provider per realm.
var Key = core.NewKey[Store]("spillStore")

// Config is the spill-local plugin's configuration (harness.yml row
// `name: spill-local`).
type Config struct {
	// Root is the spill directory; relative paths resolve against the working
	// directory. Empty means $XDG_STATE_HOME/harness/spill (or
	// ~/.local/state/harness/spill; without a home directory, a private
	// temporary directory).
	Root string `yaml:"root" json:"root,omitempty"`
	// MaxAge is the retention age: spill files older than this are deleted at
	// start and every CleanupInterval. 0 keeps them forever.
	MaxAge time.Duration `yaml:"maxAge" json:"maxAge,omitempty"`
	// CleanupInterval is how often retention runs while the plugin is active;
	// 0 runs it only at start.
	CleanupInterval time.Duration `yaml:"cleanupInterval" json:"cleanupInterval,omitempty"`
	// Keep leaves this run's spill files on disk when the plugin is disposed
	// (normal exit, Ctrl-C, SIGTERM); they are then aged out by MaxAge. By
	// default they are deleted.
	Keep bool `yaml:"keep" json:"keep,omitempty"`
}

// SetDefaults sets MaxAge to 168h and CleanupInterval to 1h.
func (c *Config) SetDefaults() {
	c.MaxAge = 7 * 24 * time.Hour
	c.CleanupInterval = time.Hour
}

// Validate rejects negative durations.
func (c *Config) Validate() error {
	var issues []core.Issue
	if c.MaxAge < 0 {
		issues = append(issues, core.Issue{Path: "maxAge", Message: "must not be negative"})
	}
	if c.CleanupInterval < 0 {
		issues = append(issues, core.Issue{Path: "cleanupInterval", Message: "must not be negative"})
	}
	if len(issues) > 0 {
		return &core.ConfigError{Plugin: "spill-local", Issues: issues}
	}
	return nil
}

// Plugin is spill-local: it provides a [*LocalStore] under Key, runs
// retention at start and on a timer, and on disposal closes the store
// (deleting this run's owner directories unless Keep).
var Plugin = core.Define("spill-local", apply,
	core.WithProvides(Key.Name()),
	core.WithDescription("spill store on local files: private 0600 files in 0700 per-session directories, with retention"))

func apply(c *core.Context, cfg Config) error {
	root, tempRoot := cfg.Root, false
	if root == "" {
		var err error
		if root, err = DefaultRoot(); err != nil {
			// No state directory (no $HOME): a private 0700 directory under
			// $TMPDIR, with an unpredictable name.
			if root, err = os.MkdirTemp("", "harness-spill-"); err != nil {
				return fmt.Errorf("spill-local: root: %w", err)
			}
			tempRoot = true
			c.Logger().Info("spill-local: no state directory; spilling under a private temporary directory", "root", root)
		}
	}
	store, err := NewLocalStore(LocalOptions{Root: root, MaxAge: cfg.MaxAge, Keep: cfg.Keep})
	if err != nil {
		return err
	}
	log := c.Logger()
	if err := c.Effect("close spill store", func() (func(), error) {
		return func() {
			if err := store.Close(); err != nil {
				log.Warn("spill-local: closing the store", "err", err)
			}
			if tempRoot && !cfg.Keep {
				_ = os.Remove(root) // only if empty: other runs' spills stay
			}
		}, nil
	}); err != nil {
		return err
	}
	cleanup := func() {
		n, err := store.Cleanup(time.Now())
		if err != nil && !errors.Is(err, ErrClosed) {
			log.Warn("spill-local: retention", "err", err)
		}
		if n > 0 {
			log.Info("spill-local: retention deleted old spill files", "files", n)
		}
	}
	cleanup()
	if cfg.MaxAge > 0 && cfg.CleanupInterval > 0 {
		if err := core.Go(c, func(ctx context.Context) error {
			t := time.NewTicker(cfg.CleanupInterval)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return nil
				case <-t.C:
					cleanup()
				}
			}
		}); err != nil {
			return err
		}
	}
	return core.Provide(c, Key, Store(store))
}

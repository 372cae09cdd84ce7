package worktrees

import (
	"path/filepath"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/sessions"
)

// Key is the worktrees service key ("worktrees").
var Key = core.NewKey[*Manager]("worktrees")

// Config is the worktrees plugin's configuration (harness.yml row
// `name: worktrees`).
type Config struct {
	// Dir is where worktrees are made. Empty: the harness state directory
	// ($XDG_STATE_HOME/harness/worktrees/<repo>-<id>/NAME). A relative
	// path is inside the repository's main working tree, e.g.
	// .harness/worktrees (then .harness/worktrees/NAME, git-ignored).
	Dir string `yaml:"dir" json:"dir,omitempty"`
}

// Validate rejects a dir that leaves the repository ("..").
func (c *Config) Validate() error {
	d := filepath.Clean(c.Dir)
	if c.Dir != "" && !filepath.IsAbs(d) && (d == "." || d == ".." || len(d) > 2 && d[:3] == ".."+string(filepath.Separator)) {
		return &core.ConfigError{Plugin: "worktrees", Issues: []core.Issue{{Path: "dir", Message: "a relative dir must be a directory inside the repository (such as .harness/worktrees), got " + c.Dir}}}
	}
	return nil
}

// ManagerDir returns the manager directory cfg names: cfg.Dir, or
// StateDir/worktrees when it is empty (lookup reads the environment).
func (c Config) ManagerDir(lookup func(string) (string, bool)) string {
	if c.Dir != "" {
		return c.Dir
	}
	return filepath.Join(sessions.DefaultStateDir(lookup), "worktrees")
}

// Plugin is the worktrees row: it provides a [*Manager] under Key for
// what makes worktrees in-process. `harness run --worktree` and `harness
// worktree` read the row's config before the harness starts.
var Plugin = core.Define("worktrees", apply,
	core.WithProvides(Key.Name()),
	core.WithDescription("git worktrees per task (harness run --worktree NAME): branch harness/NAME, summary, removal when clean"))

func apply(c *core.Context, cfg Config) error {
	return core.Provide(c, Key, New(cfg.ManagerDir(nil)))
}

package workspaces

import (
	"os"
	"path/filepath"

	"github.com/dshgo/harness/core"
)

// Key is the workspaces service.
var Key = core.NewKey[*Service]("workspaces")

// Config is the workspaces plugin's configuration.
type Config struct {
	// StateDir holds workspaces.json. Empty: $XDG_STATE_HOME/harness, else
	// ~/.local/state/harness (the sessions store's default).
	StateDir string `yaml:"stateDir" json:"stateDir,omitempty"`
}

// Plugin provides the workspaces service.
var Plugin = core.Define("workspaces", apply,
	core.WithProvides(Key.Name()),
	core.WithDescription("the directories the web app works in, each with its sessions (STATEDIR/workspaces.json)"))

func apply(c *core.Context, cfg Config) error {
	dir := cfg.StateDir
	if dir == "" {
		dir = defaultStateDir()
	}
	s, err := New(dir)
	if err != nil {
		return err
	}
	return core.Provide(c, Key, s)
}

// defaultStateDir is $XDG_STATE_HOME/harness, else ~/.local/state/harness.
func defaultStateDir() string {
	if v, ok := os.LookupEnv("XDG_STATE_HOME"); ok && filepath.IsAbs(v) {
		return filepath.Join(v, "harness")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "harness")
	}
	return filepath.Join(os.TempDir(), "harness-state")
}

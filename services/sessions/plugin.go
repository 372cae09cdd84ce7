package sessions

import (
	"os"
	"path/filepath"

	"github.com/dshgo/harness/core"
)

// JSONLConfig is the sessions-jsonl plugin's configuration (harness.yml
// row `name: sessions-jsonl`).
type JSONLConfig struct {
	// StateDir holds the session logs (StateDir/sessions/ID.jsonl). Empty:
	// $XDG_STATE_HOME/harness, else ~/.local/state/harness.
	StateDir string `yaml:"stateDir" json:"stateDir,omitempty"`
}

// JSONLPlugin is sessions-jsonl, the default session store: it provides
// the sessions [Service] over a [JSONL] provider.
var JSONLPlugin = core.Define("sessions-jsonl", applyJSONL,
	core.WithProvides(Key.Name()),
	core.WithDescription("session store on local JSONL files: one append-only, flock-locked 0600 log per session"))

func applyJSONL(c *core.Context, cfg JSONLConfig) error {
	dir := cfg.StateDir
	if dir == "" {
		dir = DefaultStateDir(nil)
	}
	return core.Provide(c, Key, New(NewJSONL(JSONLDir(dir))))
}

// DefaultStateDir returns $XDG_STATE_HOME/harness, else
// ~/.local/state/harness, else a harness-state directory under the temp
// dir. lookup reads the environment (nil: os.LookupEnv).
func DefaultStateDir(lookup func(string) (string, bool)) string {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	if v, ok := lookup("XDG_STATE_HOME"); ok && filepath.IsAbs(v) {
		return filepath.Join(v, "harness")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "harness")
	}
	return filepath.Join(os.TempDir(), "harness-state")
}

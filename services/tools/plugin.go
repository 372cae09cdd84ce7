package tools

import (
	"errors"

	"github.com/dshgo/harness/core"
)

// Config is the tools plugin's configuration (harness.yml row `name: tools`).
type Config struct {
	// MaxParallel bounds how many tool bodies of one model step may run at once
	// (the Scheduler's default limit). 1 runs them serially.
	MaxParallel int `yaml:"maxParallel" json:"maxParallel,omitempty" jsonschema:"minimum=1,default=10,description=Maximum number of tool bodies of one model step that may run at once"`
}

// SetDefaults sets MaxParallel to 10.
func (c *Config) SetDefaults() { c.MaxParallel = DefaultMaxParallel }

// Validate rejects a non-positive MaxParallel.
func (c *Config) Validate() error {
	if c.MaxParallel < 1 {
		return errMaxParallel
	}
	return nil
}

var errMaxParallel = errors.New("maxParallel: must be at least 1")

// Plugin provides the tool registry under Key ("tools").
var Plugin = core.Define("tools", func(c *core.Context, cfg Config) error {
	return core.Provide(c, Key, New(c, cfg.MaxParallel))
}, core.WithProvides(Key.Name()), core.WithDescription("the tool registry and its execution pipeline"))

// Register registers tools in the registry injected into c (the plugin must
// list Key.Name() in core.WithInject), as effects of c's fiber. See
// Registry.Register.
func Register(c *core.Context, tools ...*Tool) error {
	return core.Use(c, Key).Register(c, tools...)
}

package tools

import (
	"errors"
	"strings"

	"github.com/dshgo/harness/core"
)

// Config is the tools plugin's configuration (harness.yml row `name: tools`).
type Config struct {
	// MaxParallel bounds how many tool bodies of one model step may run at once
	// (the Scheduler's default limit). 1 runs them serially.
	MaxParallel int `yaml:"maxParallel" json:"maxParallel,omitempty" jsonschema:"minimum=1,default=10"`
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

// NewPlugin defines a plugin named name (the key harness.yml's `name` uses)
// that contributes ts: it injects the registry (Key) and registers the tools
// as effects of its fiber, so unmounting the row removes them. It takes no
// config (`config:` must be empty). A tool plugin that does more (a config,
// several services, listeners) is written long-hand with core.Define and
// [Register]; see docs/plugin-authors.md.
func NewPlugin(name string, ts ...*Tool) core.Plugin {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = "<nil>" // Register fails the fiber naming the problem
		if t != nil {
			names[i] = t.Name()
		}
	}
	return core.Define(name, func(c *core.Context, _ struct{}) error {
		return Register(c, ts...)
	}, core.WithInject(Key.Name()), core.WithDescription("Contributes the tools "+strings.Join(names, ", ")))
}

// RegisterPlugin is [NewPlugin] followed by core.Register: the one call a
// third-party tool package makes, from a package-level variable or init,
// so that importing the package makes the plugin available to harness.yml.
//
//	var Plugin = tools.RegisterPlugin("tool-word-count", WordCount)
//
// Like core.Register it panics at init when another plugin already took
// name.
func RegisterPlugin(name string, ts ...*Tool) core.Plugin {
	p := NewPlugin(name, ts...)
	core.Register(p)
	return p
}

package subagent

import (
	"fmt"

	"github.com/dshgo/harness/core"
)

// Config is the subagents plugin's configuration (harness.yml row
// `name: subagents`).
type Config struct {
	// MaxDepth bounds nesting: children of a top-level session have depth
	// 1; a child at maxDepth gets no delegation tools (default 1).
	MaxDepth int `yaml:"maxDepth" json:"maxDepth,omitempty" jsonschema:"minimum=1,default=1"`
}

// SetDefaults sets MaxDepth to 1.
func (c *Config) SetDefaults() { c.MaxDepth = 1 }

// Validate rejects a MaxDepth below 1.
func (c *Config) Validate() error {
	if c.MaxDepth < 1 {
		return &core.ConfigError{Plugin: "subagents", Issues: []core.Issue{{Path: "maxDepth", Message: fmt.Sprintf("must be at least 1, got %d", c.MaxDepth)}}}
	}
	return nil
}

// Plugin provides the subagents service. On unload every live child is
// interrupted, awaited and closed.
var Plugin = core.Define("subagents", apply,
	core.WithProvides(Key.Name()),
	core.WithDescription("subagents: a registry of child-agent providers, with lineage rules"))

func apply(c *core.Context, cfg Config) error {
	s := New(c, cfg.MaxDepth)
	if err := c.Effect("subagents shutdown", func() (func(), error) { return s.shutdown, nil }); err != nil {
		return err
	}
	return core.Provide(c, Key, s)
}

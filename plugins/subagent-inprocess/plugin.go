package subagentinprocess

import (
	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/subagent"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tools"
)

// Config is the plugin's configuration (harness.yml row
// `name: subagent-inprocess`).
type Config struct {
	// Name is the provider name the delegation tools and agent definitions
	// refer to (default "inprocess").
	// Provider name in the subagents registry.
	Name string `yaml:"name" json:"name,omitempty" jsonschema:"default=inprocess"`
}

// SetDefaults sets Name to "inprocess".
func (c *Config) SetDefaults() { c.Name = "inprocess" }

// Plugin registers the in-process provider with the subagents service.
var Plugin = core.Define("subagent-inprocess", apply,
	core.WithInject(subagent.Key.Name(), agent.Key.Name(), tools.Key.Name(), systemprompt.Key.Name()),
	core.WithDescription("subagents as agent sessions in this process (child scope, inherited policy, own log)"))

func apply(c *core.Context, cfg Config) error {
	svc := core.Use(c, subagent.Key)
	p := &Provider{
		agent:    core.Use(c, agent.Key),
		tools:    core.Use(c, tools.Key),
		prompt:   core.Use(c, systemprompt.Key),
		maxDepth: svc.MaxDepth(),
		name:     cfg.Name,
	}
	return svc.Register(c, cfg.Name, p)
}

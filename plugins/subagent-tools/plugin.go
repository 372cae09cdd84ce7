package subagenttools

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/subagent"
	"github.com/dshgo/harness/services/tools"
)

// Config is the plugin's configuration (harness.yml row
// `name: subagent-tools`).
type Config struct {
	// Provider is the subagents provider the tools start children with,
	// unless an agent definition names another (default "inprocess").
	Provider string `yaml:"provider" json:"provider,omitempty" jsonschema:"default=inprocess"`
	// Dirs replaces the directories agent definitions are read from
	// (default: .harness/agents and .claude/agents under the working
	// directory, then $XDG_CONFIG_HOME/harness/agents).
	Dirs []string `yaml:"dirs" json:"dirs,omitempty" jsonschema:" .claude/agents, $XDG_CONFIG_HOME/harness/agents)"`
}

// SetDefaults sets Provider to "inprocess".
func (c *Config) SetDefaults() { c.Provider = "inprocess" }

// Plugin registers the delegation tools.
var Plugin = core.Define("subagent-tools", apply,
	core.WithInject(subagent.Key.Name(), tools.Key.Name()),
	core.WithDescription("task, send_message, interrupt_agent and list_agents: delegation to subagents, with agent definitions"))

// plugin is the state of one activation.
type plugin struct {
	svc  *subagent.Service
	cfg  Config
	defs []subagent.Definition

	mu         sync.Mutex
	background map[string]*agent.Session // background child id → parent to notify
}

func apply(c *core.Context, cfg Config) error {
	dirs := cfg.Dirs
	if dirs == nil {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		dirs = subagent.DefinitionDirs(wd, os.LookupEnv)
	}
	defs, err := subagent.LoadDefinitions(dirs)
	if err != nil {
		return fmt.Errorf("agent definitions: %w", err)
	}
	p := &plugin{svc: core.Use(c, subagent.Key), cfg: cfg, defs: defs, background: map[string]*agent.Session{}}
	if err := core.On(c, subagent.Settled, p.settled); err != nil {
		return err
	}
	return tools.Register(c, p.taskTool(), p.sendTool(), p.interruptTool(), p.listTool())
}

// settled notifies the parent of a background child that settled.
func (p *plugin) settled(_ context.Context, s subagent.Settlement) error {
	p.mu.Lock()
	parent := p.background[s.Info.ID]
	delete(p.background, s.Info.ID)
	p.mu.Unlock()
	if parent != nil {
		parent.Notify("subagent:"+s.Info.ID, fmt.Sprintf("<agent-notification agent_id=%q status=%q>\n%s\n</agent-notification>",
			s.Info.ID, s.Outcome.Status, notice(s.Outcome)))
	}
	return nil
}

func notice(o subagent.Outcome) string {
	if o.Status == subagent.StatusCompleted {
		return o.Text
	}
	return o.Error
}

package agent

import (
	"fmt"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/sessions"
)

// Config is the agent plugin's configuration (harness.yml row `name: agent`).
type Config struct {
	// Model is the default model route ("provider/model", "provider/alias"
	// or "provider"); empty selects the default model of the first
	// registered provider. `harness run --model` overrides it.
	Model string `yaml:"model" jsonschema:"description=Default model route: provider/model or provider (empty: the first provider's default model)"`
	// MaxSteps bounds the model calls of one user turn (default 50).
	MaxSteps int `yaml:"maxSteps" jsonschema:"minimum=1,default=50,description=Maximum model calls per user turn"`
	// Thinking is the default thinking mode: enabled, disabled or empty for
	// the model's own default.
	Thinking llm.Thinking `yaml:"thinking" jsonschema:"enum=,enum=enabled,enum=disabled,description=Thinking mode (empty: the model default)"`
	// ReasoningEffort is passed to models that support it when thinking is on.
	ReasoningEffort string `yaml:"reasoningEffort" jsonschema:"description=Reasoning effort for thinking models (e.g. high or max)"`
	// StateDir is no longer read here: the session store is its own row
	// (sessions-jsonl, whose stateDir this was; or sessions-postgres).
	// Setting it is an error that says so.
	StateDir string `yaml:"stateDir" jsonschema:"description=Moved: set stateDir on the sessions-jsonl row"`
	// MaxParallelToolCalls bounds overlapped parallel-safe tool bodies of one
	// step; 0 uses the tools service's maxParallel, 1 runs them serially.
	MaxParallelToolCalls int `yaml:"maxParallelToolCalls" jsonschema:"minimum=0,description=Overlapped parallel-safe tool calls per step (0: the tools service default)"`
}

// DefaultMaxSteps is the default bound on model calls per user turn.
const DefaultMaxSteps = 50

// SetDefaults sets MaxSteps to 50.
func (c *Config) SetDefaults() { c.MaxSteps = DefaultMaxSteps }

// Validate checks the bounds and the thinking mode.
func (c Config) Validate() error {
	var issues []core.Issue
	if c.MaxSteps < 1 {
		issues = append(issues, core.Issue{Path: "maxSteps", Message: fmt.Sprintf("must be at least 1, got %d", c.MaxSteps)})
	}
	if err := c.Thinking.Validate(); err != nil {
		issues = append(issues, core.Issue{Path: "thinking", Message: err.Error()})
	}
	if c.StateDir != "" {
		issues = append(issues, core.Issue{Path: "stateDir", Message: "moved to the session store: set it on the sessions-jsonl row (`- name: sessions-jsonl` with `config: {stateDir: ...}`)"})
	}
	if c.MaxParallelToolCalls < 0 {
		issues = append(issues, core.Issue{Path: "maxParallelToolCalls", Message: "must not be negative"})
	}
	if len(issues) > 0 {
		return &core.ConfigError{Issues: issues}
	}
	return nil
}

// DefaultStateDir returns the default state directory of the
// sessions-jsonl store ([sessions.DefaultStateDir]).
func DefaultStateDir(lookup func(string) (string, bool)) string {
	return sessions.DefaultStateDir(lookup)
}

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
	Model string `yaml:"model"`
	// MaxSteps bounds the model calls of one user turn (default 50).
	MaxSteps int `yaml:"maxSteps" jsonschema:"minimum=1,default=50"`
	// Thinking is the default thinking mode: enabled, disabled or empty for
	// the model's own default.
	Thinking llm.Thinking `yaml:"thinking" jsonschema:"enum=,enum=enabled,enum=disabled"`
	// ReasoningEffort is passed to models that support it when thinking is on.
	// Reasoning effort for thinking models (e.g. high or max).
	ReasoningEffort string `yaml:"reasoningEffort"`
	// StateDir is no longer read here: the session store is its own row
	// (sessions-jsonl, whose stateDir this was; or sessions-postgres).
	// Setting it is an error that says so.
	StateDir string `yaml:"stateDir"`
	// MaxParallelToolCalls bounds overlapped parallel-safe tool bodies of one
	// step; 0 uses the tools service's maxParallel, 1 runs them serially.
	MaxParallelToolCalls int `yaml:"maxParallelToolCalls" jsonschema:"minimum=0"`
	// MaxToolArgBytes bounds one tool call's argument text, in bytes
	// (0 or unset: DefaultMaxToolArgBytes, 1 MiB). Larger arguments are not kept: the call is logged
	// and sent back to the model with arguments {} and gets an
	// INVALID_ARGS error result saying how large they were.
	MaxToolArgBytes int64 `yaml:"maxToolArgBytes" jsonschema:"minimum=0,default=1048576"`
	// MaxReplyBytes bounds what is kept of one model reply's text, and of
	// its reasoning, in bytes (0 or unset: DefaultMaxReplyBytes, 4 MiB, far
	// above any model's output limit). The rest still streams to the
	// terminal, but the session keeps (and the model is sent back) only the
	// first MaxReplyBytes, ended by a note saying how much was dropped, so
	// an endpoint that streams without end cannot make the harness hold it.
	MaxReplyBytes int64 `yaml:"maxReplyBytes" jsonschema:"minimum=0,default=4194304"`
	// Budget caps what each session may spend (cost in US dollars, tokens);
	// unset: no cap. Options.Budget (`harness run --max-cost`,
	// `--max-tokens`) overrides it cap by cap. See [Budget].
	Budget Budget `yaml:"budget"`
}

// DefaultMaxSteps is the default bound on model calls per user turn.
const DefaultMaxSteps = 50

// DefaultMaxToolArgBytes is the default bound on one tool call's
// arguments: 1 MiB.
const DefaultMaxToolArgBytes = 1 << 20

// DefaultMaxReplyBytes is the default bound on the text (and on the
// reasoning) kept of one model reply: 4 MiB.
const DefaultMaxReplyBytes = 4 << 20

// SetDefaults sets MaxSteps to 50, MaxToolArgBytes to 1 MiB and
// MaxReplyBytes to 4 MiB.
func (c *Config) SetDefaults() {
	c.MaxSteps = DefaultMaxSteps
	c.MaxToolArgBytes = DefaultMaxToolArgBytes
	c.MaxReplyBytes = DefaultMaxReplyBytes
}

// Validate checks the bounds and the thinking mode.
func (c Config) Validate() error {
	var issues []core.Issue
	if c.MaxSteps < 1 {
		issues = append(issues, core.Issue{Path: "maxSteps", Message: fmt.Sprintf("must be at least 1, got %d", c.MaxSteps)})
	}
	if err := c.Thinking.Validate(); err != nil {
		issues = append(issues, core.Issue{Path: "thinking", Message: err.Error()})
	}
	if c.MaxReplyBytes < 0 {
		issues = append(issues, core.Issue{Path: "maxReplyBytes", Message: fmt.Sprintf("must not be negative, got %d", c.MaxReplyBytes)})
	}
	if c.MaxToolArgBytes < 0 {
		issues = append(issues, core.Issue{Path: "maxToolArgBytes", Message: fmt.Sprintf("must not be negative, got %d", c.MaxToolArgBytes)})
	}
	if c.StateDir != "" {
		issues = append(issues, core.Issue{Path: "stateDir", Message: "moved to the session store: set it on the sessions-jsonl row (`- name: sessions-jsonl` with `config: {stateDir: ...}`)"})
	}
	issues = append(issues, c.Budget.issues("budget.")...)
	if c.MaxParallelToolCalls < 0 {
		issues = append(issues, core.Issue{Path: "maxParallelToolCalls", Message: "must not be negative"})
	}
	if len(issues) > 0 {
		return &core.ConfigError{Issues: issues}
	}
	return nil
}

// maxToolArgBytes is MaxToolArgBytes with 0 meaning the default.
func (c Config) maxToolArgBytes() int64 {
	if c.MaxToolArgBytes <= 0 {
		return DefaultMaxToolArgBytes
	}
	return c.MaxToolArgBytes
}

// maxReplyBytes is MaxReplyBytes with 0 meaning the default.
func (c Config) maxReplyBytes() int64 {
	if c.MaxReplyBytes <= 0 {
		return DefaultMaxReplyBytes
	}
	return c.MaxReplyBytes
}

// DefaultStateDir returns the default state directory of the
// sessions-jsonl store ([sessions.DefaultStateDir]).
func DefaultStateDir(lookup func(string) (string, bool)) string {
	return sessions.DefaultStateDir(lookup)
}

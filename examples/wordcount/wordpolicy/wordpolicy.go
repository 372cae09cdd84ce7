// Package wordpolicy is a long-form harness plugin: a typed config, a
// pre-execute policy on word_count's decoded arguments, and a system prompt
// section with a variable. Importing it registers "word-count-policy".
package wordpolicy

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"example.com/wordcount/wordcount"
	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tools"
)

// Config is the plugin's harness.yml config.
type Config struct {
	Forbidden []string `yaml:"forbidden" jsonschema:"description=Words whose texts word_count refuses to count (case-insensitive)"`
	MaxWords  int      `yaml:"maxWords" jsonschema:"minimum=1,description=Longest text in words that word_count may be asked to count"`
}

// SetDefaults forbids nothing and allows texts of up to 10000 words.
func (c *Config) SetDefaults() { c.MaxWords = 10000 }

// Validate rejects a non-positive maxWords and empty forbidden words.
func (c Config) Validate() error {
	var errs []error
	if c.MaxWords < 1 {
		errs = append(errs, errors.New("maxWords: must be at least 1"))
	}
	for i, w := range c.Forbidden {
		if strings.TrimSpace(w) == "" {
			errs = append(errs, fmt.Errorf("forbidden[%d]: must not be empty", i))
		}
	}
	return errors.Join(errs...)
}

// Plugin is the plugin definition: it needs the tool registry and the
// system prompt service.
var Plugin = core.Define("word-count-policy", apply,
	core.WithInject(tools.Key.Name(), systemprompt.Key.Name()),
	core.WithDescription("Limits word_count and tells the model about the limits"))

func init() { core.Register(Plugin) }

func apply(c *core.Context, cfg Config) error {
	if err := tools.OnPreExecute(c, func(_ context.Context, e *tools.Execution) (tools.Decision, error) {
		return decide(cfg, e), nil
	}); err != nil {
		return err
	}
	return promptSection(c, cfg)
}

// decide judges one call on its decoded arguments: e.Args() is the Args
// struct the tool's body will receive, after JSON unescaping, so
// "\u0066orbidden" is "forbidden" here.
func decide(cfg Config, e *tools.Execution) tools.Decision {
	a, ok := e.Args().(wordcount.Args)
	if !ok { // another tool, or arguments that failed validation
		return tools.Allow()
	}
	words := strings.Fields(strings.ToLower(a.Text))
	if len(words) > cfg.MaxWords {
		return tools.Deny(fmt.Sprintf("the text has %d words; the limit is %d", len(words), cfg.MaxWords))
	}
	for _, w := range words {
		for _, f := range cfg.Forbidden {
			if strings.Trim(w, ".,;:!?\"'") == strings.ToLower(f) {
				return tools.Deny(fmt.Sprintf("the text contains the forbidden word %q", f))
			}
		}
	}
	return tools.Allow()
}

// promptSection tells the model the limits through a section whose text
// uses the {{word_limit}} variable.
func promptSection(c *core.Context, cfg Config) error {
	sp := core.Use(c, systemprompt.Key)
	if _, err := sp.Variable(c, "word_limit", func(context.Context, systemprompt.AssembleContext) (string, bool) {
		return fmt.Sprint(cfg.MaxWords), true
	}); err != nil {
		return err
	}
	_, err := sp.Section(c, systemprompt.Section{
		Name:  "word-count-policy",
		Order: 2500,
		Text:  "word_count counts texts of at most {{word_limit}} words.",
	})
	return err
}

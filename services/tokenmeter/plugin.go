package tokenmeter

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/dshgo/harness/core"
)

// Key is the token meter service key ("tokenMeter").
var Key = core.NewKey[*Meter]("tokenMeter")

// Config is the tokenmeter plugin's configuration (harness.yml row
// `name: tokenmeter`).
type Config struct {
	// Estimator names the estimator: heuristic (default), bytes, o200k,
	// cl100k or tokenizer-json.
	// How text is priced.
	Estimator string `yaml:"estimator" json:"estimator,omitempty" jsonschema:"enum=heuristic,enum=bytes,enum=o200k,enum=cl100k,enum=tokenizer-json,default=heuristic"`
	// Tokenizer is the HuggingFace tokenizer.json the tokenizer-json
	// estimator loads (required for it, ignored otherwise).
	Tokenizer string `yaml:"tokenizer" json:"tokenizer,omitempty"`
	// Models maps a model name to its context window and prices.
	Models map[string]Model `yaml:"models" json:"models,omitempty"`
}

// SetDefaults selects the heuristic estimator.
func (c *Config) SetDefaults() { c.Estimator = "heuristic" }

// Validate checks the estimator name, the tokenizer requirement and every
// model's figures, naming the field path of each problem.
func (c *Config) Validate() error {
	var issues []core.Issue
	if !slices.Contains(EstimatorNames, c.Estimator) {
		issues = append(issues, core.Issue{Path: "estimator", Message: fmt.Sprintf("unknown estimator %q (want one of %v)", c.Estimator, EstimatorNames)})
	}
	if c.Estimator == "tokenizer-json" && c.Tokenizer == "" {
		issues = append(issues, core.Issue{Path: "tokenizer", Message: "required by estimator tokenizer-json"})
	}
	names := make([]string, 0, len(c.Models))
	for name := range c.Models {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		m := c.Models[name]
		at := "models." + name
		if m.ContextWindow < 0 {
			issues = append(issues, core.Issue{Path: at + ".contextWindow", Message: "must not be negative"})
		}
		if p := m.Prices; p != nil {
			for field, v := range map[string]float64{"inputCacheHit": p.InputCacheHit, "inputCacheMiss": p.InputCacheMiss, "output": p.Output} {
				if v < 0 {
					issues = append(issues, core.Issue{Path: at + ".prices." + field, Message: "must not be negative"})
				}
			}
		}
	}
	if len(issues) > 0 {
		sort.SliceStable(issues, func(i, j int) bool { return issues[i].Path < issues[j].Path })
		return &core.ConfigError{Plugin: "tokenmeter", Issues: issues}
	}
	return nil
}

// Plugin provides the [*Meter] under Key. A tokenizer-json file is loaded
// while the plugin applies (a bad file fails the plugin); the o200k/cl100k
// vocabularies are warmed up in the background.
var Plugin = core.Define("tokenmeter", apply,
	core.WithProvides(Key.Name()),
	core.WithDescription("token counts for text, messages and tool schemas; usage-anchored context projections"))

func apply(c *core.Context, cfg Config) error {
	est, err := NewEstimator(cfg.Estimator, cfg.Tokenizer)
	if err != nil {
		return err
	}
	if tk, ok := est.(*Tiktoken); ok {
		if err := core.Go(c, func(context.Context) error {
			tk.Count("warm up")
			return nil
		}); err != nil {
			return err
		}
	}
	return core.Provide(c, Key, NewMeter(est, cfg.Models))
}

package llm

import (
	"errors"
	"fmt"
	"strings"
)

// Model describes one model of a provider route.
type Model struct {
	// Provider is the route name the model belongs to ("deepseek").
	Provider string `json:"provider"`
	// Name is the model id sent to the provider ("deepseek-v4-flash").
	Name string `json:"name"`
	// Default marks the model used when a request names only the provider.
	Default bool `json:"default,omitempty"`
	// ContextWindow is the maximum request plus response size, in tokens; 0 = unknown.
	ContextWindow int64 `json:"contextWindow,omitempty"`
	// MaxOutputTokens is the maximum reply size, in tokens; 0 = unknown.
	MaxOutputTokens int64 `json:"maxOutputTokens,omitempty"`
	// Thinking is the default thinking mode; ThinkingDefault ("") means the
	// model has no thinking switch, so a per-request override is rejected
	// with CodeUnsupportedOption.
	Thinking Thinking `json:"thinking,omitempty"`
	// ReasoningEffort is the default reasoning effort sent when thinking is
	// enabled; "" sends none.
	ReasoningEffort string `json:"reasoningEffort,omitempty"`
	// Prices are per 1M tokens; zero when unknown.
	Prices Prices `json:"prices,omitzero"`
	// Aliases are other names that resolve to this model, each possibly
	// fixing the thinking mode (deepseek-chat: disabled; deepseek-reasoner: enabled).
	Aliases []Alias `json:"aliases,omitempty"`
}

// Alias is another name for a model.
type Alias struct {
	// Name is the alias ("deepseek-reasoner").
	Name string `yaml:"name" json:"name"`
	// Thinking, when set, is the thinking mode the alias selects.
	Thinking Thinking `yaml:"thinking" json:"thinking,omitempty" jsonschema:"enum=,enum=enabled,enum=disabled"`
}

// Route is "provider/name".
func (m Model) Route() string { return m.Provider + "/" + m.Name }

// ErrNoAdapter is wrapped by route-resolution failures.
var ErrNoAdapter = errors.New("no adapter for route")

// SplitRoute splits "provider/model" into its parts; model is "" for a bare
// "provider". The model part may itself contain slashes ("local/qwen/qwen3").
func SplitRoute(route string) (provider, model string, err error) {
	provider, model, _ = strings.Cut(strings.TrimSpace(route), "/")
	if provider == "" {
		return "", "", fmt.Errorf("model route %q: want provider/model: %w", route, ErrNoAdapter)
	}
	return provider, model, nil
}

// ResolveModel finds name (canonical, alias, or "" for the default) among
// models. It returns the model with Thinking replaced by the alias's mode
// when the alias fixes one. Without a default model, "" selects the first.
func ResolveModel(models []Model, name string) (Model, bool) {
	if name == "" {
		for _, m := range models {
			if m.Default {
				return m, true
			}
		}
		if len(models) > 0 {
			return models[0], true
		}
		return Model{}, false
	}
	for _, m := range models {
		if m.Name == name {
			return m, true
		}
	}
	for _, m := range models {
		for _, a := range m.Aliases {
			if a.Name == name {
				if a.Thinking != ThinkingDefault {
					m.Thinking = a.Thinking
				}
				return m, true
			}
		}
	}
	return Model{}, false
}

// EffectiveOptions checks opts against m and returns the options to send:
// Thinking resolved against the model default, ReasoningEffort defaulted
// (cleared when thinking is off), MaxOutputTokens checked against the limit.
// Failures are CodeUnsupportedOption errors naming the option.
func EffectiveOptions(m Model, opts Options) (Options, *Error) {
	if err := opts.Thinking.Validate(); err != nil {
		return Options{}, Errorf(CodeUnsupportedOption, "%v", err)
	}
	out := opts
	switch {
	case m.Thinking == ThinkingDefault && opts.Thinking != ThinkingDefault:
		return Options{}, Errorf(CodeUnsupportedOption, "model %s has no thinking switch (option thinking=%s)", m.Route(), opts.Thinking)
	case opts.Thinking == ThinkingDefault:
		out.Thinking = m.Thinking
	}
	if out.ReasoningEffort == "" {
		out.ReasoningEffort = m.ReasoningEffort
	}
	if opts.ReasoningEffort != "" && m.Thinking == ThinkingDefault {
		return Options{}, Errorf(CodeUnsupportedOption, "model %s has no reasoning effort (option reasoningEffort=%s)", m.Route(), opts.ReasoningEffort)
	}
	if out.Thinking != ThinkingEnabled {
		out.ReasoningEffort = ""
	}
	if opts.MaxOutputTokens < 0 {
		return Options{}, Errorf(CodeUnsupportedOption, "maxOutputTokens %d: must not be negative", opts.MaxOutputTokens)
	}
	if m.MaxOutputTokens > 0 && opts.MaxOutputTokens > m.MaxOutputTokens {
		return Options{}, Errorf(CodeUnsupportedOption, "maxOutputTokens %d exceeds the limit %d of model %s", opts.MaxOutputTokens, m.MaxOutputTokens, m.Route())
	}
	return out, nil
}

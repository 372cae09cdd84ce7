package llmopenai

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/services/llm"
)

// Config is the llm-openai plugin configuration: one provider route.
//
//	plugins:
//	  - id: deepseek
//	    name: llm-openai
//	    config:
//	      provider: deepseek
//	      baseURL: https://api.deepseek.com
//	      apiKeyEnv: DEEPSEEK_API_KEY
//	      models:
//	        - {name: deepseek-v4-flash, default: true, contextWindow: 1048576, thinking: enabled}
type Config struct {
	// Provider is the route name: requests for "provider/model" come here.
	Provider string `yaml:"provider" json:"provider" jsonschema:"minLength=1"`
	// BaseURL is the endpoint root, e.g. https://api.deepseek.com or
	// http://127.0.0.1:11434/v1; "/chat/completions" is appended.
	BaseURL string `yaml:"baseURL" json:"baseURL" jsonschema:"minLength=1"`
	// APIKey is the bearer token. Prefer APIKeyEnv (or `!env VAR` here).
	APIKey string `yaml:"apiKey" json:"apiKey,omitempty" harness:"secret"`
	// APIKeyEnv names the environment variable read at activation when APIKey
	// is empty (e.g. DEEPSEEK_API_KEY). The key is kept only in memory.
	APIKeyEnv string `yaml:"apiKeyEnv" json:"apiKeyEnv,omitempty"`
	// RequireAPIKey makes activation fail when no key is found. Unset means
	// required unless BaseURL is a loopback address (local servers).
	RequireAPIKey *bool `yaml:"requireAPIKey" json:"requireAPIKey,omitempty"`
	// Headers are extra HTTP headers sent with every request.
	Headers map[string]string `yaml:"headers" json:"headers,omitempty"`
	// Timeout is the longest silence tolerated: until the response headers,
	// and between two stream events (Go duration, default 5m).
	Timeout Duration `yaml:"timeout" json:"timeout,omitempty"`
	// MaxRetries is how many times a request that failed before any output
	// (429, 5xx, connection reset) is repeated (default 3; 0 disables).
	MaxRetries *int `yaml:"maxRetries" json:"maxRetries,omitempty" jsonschema:"minimum=0"`
	// RetryBaseDelay is the first backoff delay; each retry doubles it, with
	// jitter (default 500ms). A Retry-After header replaces it.
	RetryBaseDelay Duration `yaml:"retryBaseDelay" json:"retryBaseDelay,omitempty"`
	// RetryMaxDelay caps one backoff delay; a longer Retry-After makes the
	// error final instead of waiting (default 30s).
	RetryMaxDelay Duration `yaml:"retryMaxDelay" json:"retryMaxDelay,omitempty"`
	// MaxResponseBytes bounds the bytes read from one model call's response
	// body, headers excluded (default 64 MiB, far above any real answer:
	// a 384K-token reply is under 2 MiB). A response that goes past it ends
	// with a PROTOCOL error naming this field, so an endpoint that streams
	// without end cannot grow memory without bound.
	MaxResponseBytes int64 `yaml:"maxResponseBytes" json:"maxResponseBytes,omitempty" jsonschema:"minimum=0"`
	// Models lists the route's models; the first with default: true (or the
	// first) serves requests naming only the provider.
	Models []ModelConfig `yaml:"models" json:"models" jsonschema:"minItems=1"`
	// AnyModel passes model names that are not listed through to the
	// endpoint unchanged (no thinking switch, unknown limits): useful for a
	// local server serving whatever models it has.
	AnyModel bool `yaml:"anyModel" json:"anyModel,omitempty"`
}

// ModelConfig describes one model of the route.
type ModelConfig struct {
	// Name is the model id sent to the endpoint.
	Name string `yaml:"name" json:"name" jsonschema:"minLength=1"`
	// Default marks the route's default model.
	// This model serves requests naming only the provider.
	Default bool `yaml:"default" json:"default,omitempty"`
	// ContextWindow is the context size in tokens (0 = unknown).
	ContextWindow int64 `yaml:"contextWindow" json:"contextWindow,omitempty" jsonschema:"minimum=0"`
	// MaxOutputTokens is the reply limit in tokens (0 = unknown).
	MaxOutputTokens int64 `yaml:"maxOutputTokens" json:"maxOutputTokens,omitempty" jsonschema:"minimum=0"`
	// Thinking is the default thinking mode, sent as DeepSeek's
	// `thinking: {type: enabled|disabled}`; empty means the model has no
	// thinking switch and nothing is sent.
	Thinking llm.Thinking `yaml:"thinking" json:"thinking,omitempty" jsonschema:"enum=,enum=enabled,enum=disabled"`
	// ReasoningEffort is sent as `reasoning_effort` when thinking is enabled.
	ReasoningEffort string `yaml:"reasoningEffort" json:"reasoningEffort,omitempty"`
	// Prices per 1M tokens, for cost figures (optional).
	Prices llm.Prices `yaml:"prices" json:"prices,omitzero"`
	// Aliases are other accepted names, optionally fixing the thinking mode.
	Aliases []llm.Alias `yaml:"aliases" json:"aliases,omitempty"`
}

// Duration is a time.Duration written as a Go duration string ("90s",
// "5m"); see manifest.Duration.
type Duration = manifest.Duration

// Defaults applied by SetDefaults.
const (
	DefaultTimeout        = 5 * time.Minute
	DefaultMaxRetries     = 3
	DefaultRetryBaseDelay = 500 * time.Millisecond
	DefaultRetryMaxDelay  = 30 * time.Second
	// DefaultMaxResponseBytes is the default MaxResponseBytes: 64 MiB.
	DefaultMaxResponseBytes = 64 << 20
)

// SetDefaults fills the defaults before decoding.
func (c *Config) SetDefaults() {
	c.Timeout = Duration(DefaultTimeout)
	c.RetryBaseDelay = Duration(DefaultRetryBaseDelay)
	c.RetryMaxDelay = Duration(DefaultRetryMaxDelay)
}

// Validate checks the configuration; errors name the field path.
func (c Config) Validate() error {
	var errs []error
	if c.Provider == "" || strings.Contains(c.Provider, "/") {
		errs = append(errs, fmt.Errorf("provider: must be a non-empty route name without '/', got %q", c.Provider))
	}
	if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("baseURL: must be an http(s) URL, got %q", c.BaseURL))
	}
	if c.Timeout < 0 || c.RetryBaseDelay < 0 || c.RetryMaxDelay < 0 {
		errs = append(errs, errors.New("timeout, retryBaseDelay, retryMaxDelay: must not be negative"))
	}
	if c.MaxResponseBytes < 0 {
		errs = append(errs, fmt.Errorf("maxResponseBytes: must not be negative, got %d", c.MaxResponseBytes))
	}
	if c.MaxRetries != nil && *c.MaxRetries < 0 {
		errs = append(errs, fmt.Errorf("maxRetries: must not be negative, got %d", *c.MaxRetries))
	}
	if len(c.Models) == 0 {
		errs = append(errs, errors.New("models: at least one model is required"))
	}
	names := map[string]string{}
	defaults := 0
	for i, m := range c.Models {
		at := fmt.Sprintf("models[%d]", i)
		if m.Name == "" {
			errs = append(errs, fmt.Errorf("%s.name: required", at))
		}
		if m.Default {
			defaults++
		}
		if err := m.Thinking.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s.thinking: %w", at, err))
		}
		if m.ReasoningEffort != "" && m.Thinking == llm.ThinkingDefault {
			errs = append(errs, fmt.Errorf("%s.reasoningEffort: needs thinking to be set", at))
		}
		if m.ContextWindow < 0 || m.MaxOutputTokens < 0 {
			errs = append(errs, fmt.Errorf("%s: contextWindow and maxOutputTokens must not be negative", at))
		}
		claim := func(field, name string) {
			if prev, dup := names[name]; dup {
				errs = append(errs, fmt.Errorf("%s: name %q already used by %s", field, name, prev))
				return
			}
			names[name] = field
		}
		claim(at+".name", m.Name)
		for j, a := range m.Aliases {
			aat := fmt.Sprintf("%s.aliases[%d]", at, j)
			if a.Name == "" {
				errs = append(errs, fmt.Errorf("%s.name: required", aat))
			}
			if err := a.Thinking.Validate(); err != nil {
				errs = append(errs, fmt.Errorf("%s.thinking: %w", aat, err))
			}
			if a.Thinking != llm.ThinkingDefault && m.Thinking == llm.ThinkingDefault {
				errs = append(errs, fmt.Errorf("%s.thinking: model %q has no thinking switch", aat, m.Name))
			}
			claim(aat+".name", a.Name)
		}
	}
	if defaults > 1 {
		errs = append(errs, fmt.Errorf("models: %d models are marked default, at most one may be", defaults))
	}
	return errors.Join(errs...)
}

// models converts the model list to the service's descriptions.
func (c Config) models() []llm.Model {
	out := make([]llm.Model, 0, len(c.Models))
	for _, m := range c.Models {
		out = append(out, llm.Model{
			Provider: c.Provider, Name: m.Name, Default: m.Default,
			ContextWindow: m.ContextWindow, MaxOutputTokens: m.MaxOutputTokens,
			Thinking: m.Thinking, ReasoningEffort: m.ReasoningEffort,
			Prices: m.Prices, Aliases: append([]llm.Alias(nil), m.Aliases...),
		})
	}
	return out
}

// apiKey returns the key to use: APIKey, else $APIKeyEnv. It fails when a
// key is required and none is found, naming where to put one.
func (c Config) apiKey() (string, error) {
	if c.APIKey != "" {
		return c.APIKey, nil
	}
	if c.APIKeyEnv != "" {
		if v := strings.TrimSpace(os.Getenv(c.APIKeyEnv)); v != "" {
			return v, nil
		}
	}
	required := !isLoopback(c.BaseURL)
	if c.RequireAPIKey != nil {
		required = *c.RequireAPIKey
	}
	if !required {
		return "", nil
	}
	if c.APIKeyEnv != "" {
		return "", fmt.Errorf("provider %q: no API key: set the environment variable %s (or config field apiKey of this llm-openai row in harness.yml)", c.Provider, c.APIKeyEnv)
	}
	return "", fmt.Errorf("provider %q: no API key: set config field apiKey (or apiKeyEnv) of this llm-openai row in harness.yml", c.Provider)
}

func isLoopback(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// maxResponseBytes is MaxResponseBytes with 0 meaning the default.
func (c Config) maxResponseBytes() int64 {
	if c.MaxResponseBytes <= 0 {
		return DefaultMaxResponseBytes
	}
	return c.MaxResponseBytes
}

func (c Config) maxRetries() int {
	if c.MaxRetries == nil {
		return DefaultMaxRetries
	}
	return *c.MaxRetries
}

package llmopenai

import (
	"fmt"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/llm"
)

// Plugin is the "llm-openai" plugin: one OpenAI-compatible provider route,
// registered in the llm service as an effect. A route that needs an API key
// and has none still activates, so the harness boots and its tools work
// without a key; each request on it then fails with a CodeAuth error
// wrapping llm.ErrMissingAPIKey that names the environment variable and the
// config field (logged once at activation, at info level).
var Plugin = core.Define("llm-openai", apply,
	core.WithInject(llm.Key.Name()),
	core.WithDescription("OpenAI-compatible chat-completions adapter (DeepSeek, OpenAI, Ollama, vLLM, llama.cpp) built on openai-go."))

func apply(c *core.Context, cfg Config) error {
	a, err := New(cfg, nil)
	if err != nil {
		return fmt.Errorf("llm-openai: %w", err)
	}
	a.logger = c.Logger()
	if kerr := a.KeyError(); kerr != nil {
		a.logger.Info("model route has no API key; its requests will fail until one is set", "error", kerr.Error())
	}
	if err := c.Effect("llm-openai idle connections", func() (func(), error) { return a.Close, nil }); err != nil {
		return err
	}
	return llm.Register(c, a)
}

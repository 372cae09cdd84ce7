package llm

import (
	"github.com/dshgo/harness/core"
)

// Key is the llm service key ("llm").
var Key = core.NewKey[*Service]("llm")

// Plugin is the "llm" plugin: it provides an empty adapter registry under
// Key. Adapter plugins (llm-openai, ...) inject it and register routes.
var Plugin = core.Define("llm", apply,
	core.WithProvides(Key.Name()),
	core.WithDescription("Model adapters by provider route: ordered streaming of text, reasoning, tool calls, usage and finish."))

func apply(c *core.Context, _ struct{}) error {
	return core.Provide(c, Key, NewService())
}

// Register adds a to the llm service as an effect of c's fiber: the route is
// removed when that plugin unloads. c's plugin must inject Key. A duplicate
// route fails with ErrDuplicateProvider.
func Register(c *core.Context, a Adapter) error {
	svc := core.Use(c, Key)
	return c.Effect("llm route "+a.Provider(), func() (func(), error) { return svc.Register(a) })
}

package systemprompt

import (
	"github.com/dshgo/harness/core"
)

// Plugin is the "systemprompt" plugin: it provides the Service under Key,
// configured by Config.
var Plugin = core.Define("systemprompt", apply,
	core.WithProvides(Key.Name()),
	core.WithDescription("System-prompt assembly: sections, runtime contexts, variables, tool schemas, persona prefix and suffix."))

func apply(c *core.Context, cfg Config) error {
	s, err := New(c, cfg)
	if err != nil {
		return err
	}
	return core.Provide(c, Key, s)
}

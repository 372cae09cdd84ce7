package prompttools

import (
	"context"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tools"
)

// Plugin is the "prompt-tools" plugin (no config).
var Plugin = core.Define("prompt-tools", apply,
	core.WithInject(tools.Key.Name(), systemprompt.Key.Name()),
	core.WithDescription("Offers the tool registry's schemas to system-prompt assembly."))

func apply(c *core.Context, _ struct{}) error {
	_, err := core.Use(c, systemprompt.Key).Tools(c, Provider{Registry: core.Use(c, tools.Key)})
	return err
}

// Provider adapts a tool registry to systemprompt.ToolProvider.
type Provider struct {
	// Registry is the tool registry whose schemas are offered.
	Registry *tools.Registry
}

// Schemas returns the registry's schemas visible in scope, projected to
// systemprompt.ToolSchema (the registry already returns copies).
func (p Provider) Schemas(_ context.Context, scope *core.ScopeID) ([]systemprompt.ToolSchema, error) {
	schemas := p.Registry.Schemas(scope)
	out := make([]systemprompt.ToolSchema, len(schemas))
	for i, s := range schemas {
		out[i] = systemprompt.ToolSchema{Name: s.Name, Description: s.Description, Parameters: s.Parameters}
	}
	return out, nil
}

// KnownNames returns nil: the names of the visible schemas.
func (Provider) KnownNames(context.Context, *core.ScopeID) ([]string, error) { return nil, nil }

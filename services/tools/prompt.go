package tools

import (
	"context"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/systemprompt"
)

// promptBridge is a child plugin of the tools plugin: when the systemprompt
// service is (or becomes) available it registers the registry as the prompt's
// tool provider, and it unloads with that service. The registry itself never
// waits for the prompt service.
var promptBridge = core.Define("tools-prompt-provider", func(c *core.Context, _ struct{}) error {
	reg := core.Use(c, Key)
	_, err := core.Use(c, systemprompt.Key).Tools(c, promptProvider{reg})
	return err
}, core.WithInject(Key.Name(), systemprompt.Key.Name()))

// promptProvider adapts the registry to systemprompt.ToolProvider.
type promptProvider struct{ reg *Registry }

func (p promptProvider) Schemas(_ context.Context, scope *core.ScopeID) ([]systemprompt.ToolSchema, error) {
	ss := p.reg.Schemas(scope)
	out := make([]systemprompt.ToolSchema, len(ss))
	for i, s := range ss {
		out[i] = systemprompt.ToolSchema{Name: s.Name, Description: s.Description, Parameters: s.Parameters}
	}
	return out, nil
}

func (p promptProvider) KnownNames(_ context.Context, scope *core.ScopeID) ([]string, error) {
	return p.reg.KnownNames(scope), nil
}

// KnownNames returns the names visible in scope before restrictions (the
// scope's own and every inherited name), used to validate prompt tool orders.
func (r *Registry) KnownNames(scope *core.ScopeID) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := r.inheritedNames(scope)
	if scope != nil {
		if l := r.scoped[scope]; l != nil {
			for _, t := range l.tools {
				if !contains(names, t.name) {
					names = append(names, t.name)
				}
			}
		}
	}
	return names
}

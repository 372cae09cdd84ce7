package tools

import (
	"slices"

	"github.com/dshgo/harness/core"
)

// KnownNames returns the names visible in scope before restrictions (the
// scope's own and every inherited name), used to validate prompt tool orders.
func (r *Registry) KnownNames(scope *core.ScopeID) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := r.inheritedNames(scope)
	if scope != nil {
		if l := r.scoped[scope]; l != nil {
			for _, t := range l.tools {
				if !slices.Contains(names, t.name) {
					names = append(names, t.name)
				}
			}
		}
	}
	return names
}

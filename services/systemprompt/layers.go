package systemprompt

import "github.com/dshgo/harness/core"

// layer holds the registrations of one scope (or of the global layer).
type layer struct {
	sections  map[string]*Section
	contexts  map[string]*PromptContext
	variables []*variableEntry // registration order
	tools     []*toolEntry     // registration order
	suppress  int              // active SuppressRuntimeContext registrations
}

type variableEntry struct {
	name string
	fn   VariableFunc
}

type toolEntry struct{ p ToolProvider }

func newLayer() *layer {
	return &layer{sections: map[string]*Section{}, contexts: map[string]*PromptContext{}}
}

func (l *layer) empty() bool {
	return len(l.sections) == 0 && len(l.contexts) == 0 && len(l.variables) == 0 && len(l.tools) == 0 && l.suppress == 0
}

func (l *layer) variable(name string) *variableEntry {
	for _, v := range l.variables {
		if v.name == name {
			return v
		}
	}
	return nil
}

// layers is the global layer plus one layer per scope that has
// registrations. Callers hold Service.mu.
type layers struct {
	global *layer
	scoped map[*core.ScopeID]*layer
}

func newLayers() layers {
	return layers{global: newLayer(), scoped: map[*core.ScopeID]*layer{}}
}

// get returns the layer of scope, creating it when create is set.
func (ls *layers) get(scope *core.ScopeID, create bool) *layer {
	if scope == nil {
		return ls.global
	}
	l := ls.scoped[scope]
	if l == nil && create {
		l = newLayer()
		ls.scoped[scope] = l
	}
	return l
}

// release drops the layer of scope once it holds nothing, so that scopes
// (one per session) do not accumulate.
func (ls *layers) release(scope *core.ScopeID) {
	if scope == nil {
		return
	}
	if l := ls.scoped[scope]; l != nil && l.empty() {
		delete(ls.scoped, scope)
	}
}

// chain returns the global layer followed by the existing layers of
// scope's ancestors, farthest first, and of scope itself.
func (ls *layers) chain(scope *core.ScopeID) []*layer {
	out := []*layer{ls.global}
	if scope == nil || len(ls.scoped) == 0 {
		return out
	}
	var rev []*layer
	for s := scope; s != nil; s = s.Parent() {
		if l := ls.scoped[s]; l != nil {
			rev = append(rev, l)
		}
	}
	for i := len(rev) - 1; i >= 0; i-- {
		out = append(out, rev[i])
	}
	return out
}

// visibleVariables returns the names of the variables a template
// registered in scope can reference.
func (ls *layers) visibleVariables(scope *core.ScopeID) map[string]Variable {
	names := map[string]Variable{}
	for _, l := range ls.chain(scope) {
		for _, v := range l.variables {
			names[v.name] = Variable{Set: true}
		}
	}
	return names
}

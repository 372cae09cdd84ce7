package systemprompt

import (
	"context"

	"github.com/dshgo/harness/core"
)

// AssembleContext selects what one assembly sees (C1). The zero value is a
// bare, agent-less assembly of the global layer only; providers must
// tolerate it.
type AssembleContext struct {
	// Scope selects the layers (global plus Scope and its ancestors) and the
	// Assemble listeners that participate. nil means global only.
	Scope *core.ScopeID
	// Agent is an opaque handle the agent loop sets so that providers can
	// read per-agent facts (model, provider, working directory). nil outside
	// the agent loop, e.g. for `harness prompt`.
	Agent any
}

// TextFunc resolves a section or context text for one assembly. It is
// called at most once per assembly, only if its entry is not shadowed, and
// never while the service holds a lock. ctx is the Assemble call's context.
type TextFunc func(ctx context.Context, ac AssembleContext) (string, error)

// Interpolation selects whether Render substitutes {{var}} references in a
// section's text.
type Interpolation uint8

const (
	// InterpolateDefault interpolates a static Text (a template written by a
	// plugin author or deployer) and renders TextFunc output verbatim
	// (runtime data, which may contain literal braces: case B27).
	InterpolateDefault Interpolation = iota
	// InterpolateOn interpolates the text whatever its source.
	InterpolateOn
	// InterpolateOff renders the text verbatim (dsh interpolate: false).
	InterpolateOff
)

// String returns "default", "on" or "off".
func (i Interpolation) String() string {
	switch i {
	case InterpolateOn:
		return "on"
	case InterpolateOff:
		return "off"
	}
	return "default"
}

// Section is one contribution to the system prompt (C1 PromptSection).
//
// A static Text that is interpolated is checked when it is registered: a
// malformed reference, or a reference to a variable not registered in the
// registering layer or a layer it sees (global and the scope chain), is
// rejected then, naming the section and the variable, instead of failing a
// later turn. Register variables before the sections that use them.
type Section struct {
	// Name is unique per layer; a scoped section shadows (replaces) a global
	// or ancestor section of the same name. Required.
	Name string
	// Order places the section: ascending, ties broken by Name in UTF-16
	// code-unit order. Must be finite; see SectionOrder for the named slots.
	Order float64
	// Text is the static text. Exclusive with TextFunc.
	Text string
	// TextFunc computes the text at each assembly. Exclusive with Text.
	TextFunc TextFunc
	// Interpolate selects {{var}} substitution (see Interpolation).
	Interpolate Interpolation
	// Complete makes this section the entire system prompt (C9): after the
	// Assemble waterfall every other section is dropped and this section's
	// pre-waterfall text is restored. More than one effective complete
	// section makes Assemble fail.
	Complete bool
}

// interpolates reports whether the section's resolved text is a template.
func (s *Section) interpolates() bool {
	switch s.Interpolate {
	case InterpolateOn:
		return true
	case InterpolateOff:
		return false
	}
	return s.TextFunc == nil
}

// PromptContext is one dynamic runtime-context contribution (C1
// PromptContext): facts that change during a session (sandbox policy,
// approval mode, memory) delivered as one user-role snapshot message rather
// than in the system prompt.
type PromptContext struct {
	// Name is unique per layer; a scoped context shadows a global one.
	Name string
	// Order places the context: ascending, then by Name. Must be finite;
	// see ContextOrder.
	Order float64
	// Text is the static text. Exclusive with TextFunc.
	Text string
	// TextFunc computes the text at each assembly. An error or panic drops
	// this context from that assembly with a warning; it never fails it.
	TextFunc TextFunc
	// Interpolate opts in to {{var}} substitution. Contexts carry runtime
	// data, so they are verbatim by default (case B27).
	Interpolate bool
}

// VariableFunc returns a prompt variable's value for one assembly, or
// ok false when it has none (rendering a reference to it then fails). A
// panic counts as no value and is logged.
type VariableFunc func(ctx context.Context, ac AssembleContext) (value string, ok bool)

// ToolProvider contributes tool schemas to every assembly that sees the
// layer it is registered in. The tool registry (services/tools) reaches
// assembly through the prompt-tools plugin (plugins/prompt-tools), which
// adapts the registry to this interface and registers it with
// Service.Tools; this package imports no other service.
type ToolProvider interface {
	// Schemas returns the tools visible in scope (after restriction), in
	// any order. An error fails the assembly.
	Schemas(ctx context.Context, scope *core.ScopeID) ([]ToolSchema, error)
	// KnownNames returns the pre-restriction universe of tool names, used to
	// validate toolOrder (a listed tool hidden in one scope is not an
	// error). nil means the names of Schemas' result.
	KnownNames(ctx context.Context, scope *core.ScopeID) ([]string, error)
}

// StaticTools is a ToolProvider with a fixed schema list, for tests and
// simple plugins.
type StaticTools []ToolSchema

// Schemas returns the list.
func (t StaticTools) Schemas(context.Context, *core.ScopeID) ([]ToolSchema, error) { return t, nil }

// KnownNames returns nil: the names of the list.
func (t StaticTools) KnownNames(context.Context, *core.ScopeID) ([]string, error) { return nil, nil }

package systemprompt

import "encoding/json"

// Assembly is the assembled model input of one step (C1 PromptAssembly):
// sections and contexts in order with their texts resolved but not yet
// interpolated, tool schemas in canonical order, and the variable values of
// this assembly. Every Assemble call returns a fresh Assembly that shares no
// memory with the registry or with earlier results, so callers and Assemble
// listeners may mutate it freely.
type Assembly struct {
	// Sections of the system prompt, in order.
	Sections []AssembledSection `json:"sections"`
	// Contexts are the dynamic runtime-context contributions, in order.
	// Empty when runtime context is suppressed.
	Contexts []AssembledContext `json:"contexts"`
	// Tools are the schemas visible to this assembly, in toolOrder order.
	Tools []ToolSchema `json:"tools"`
	// Variables maps every registered variable name (global and the scope
	// chain) to its value for this assembly; a variable whose provider had no
	// value is present with Set false.
	Variables map[string]Variable `json:"variables"`
}

// AssembledSection is one section of an Assembly: a registered Section with
// its text resolved (C1 AssembledSection).
type AssembledSection struct {
	// Name is the contributing section's name, unique within an assembly.
	Name string `json:"name"`
	// Order is the section's order; informational after assembly (sections
	// appended by Assemble listeners are not re-sorted).
	Order float64 `json:"order"`
	// Text is the resolved, uninterpolated text.
	Text string `json:"text"`
	// Interpolate reports whether Render substitutes {{var}} references in
	// Text; false renders Text verbatim. Sections appended by a listener
	// with the zero value are therefore rendered verbatim.
	Interpolate bool `json:"interpolate"`
}

// AssembledContext is one resolved runtime-context contribution (C1
// AssembledContext).
type AssembledContext struct {
	// Name is the contributing context's name, unique within an assembly.
	Name string `json:"name"`
	// Order is the context's order.
	Order float64 `json:"order"`
	// Text is the resolved, uninterpolated text.
	Text string `json:"text"`
	// Interpolate reports whether {{var}} references in Text are
	// substituted. Contexts carry runtime data, so this is false unless the
	// registering PromptContext opted in (case B27).
	Interpolate bool `json:"interpolate"`
}

// Variable is the value of one prompt variable in one assembly.
type Variable struct {
	// Value is the substituted text; meaningful only when Set.
	Value string `json:"value"`
	// Set is false when the provider had no value for this assembly;
	// rendering a reference to it then fails.
	Set bool `json:"set"`
}

// ToolSchema is the model-facing projection of one tool (name, description,
// JSON-Schema parameters). It is defined here, not in services/tools, so that
// this package imports no other service; the tools service converts its
// schemas to this shape in its ToolProvider.
type ToolSchema struct {
	// Name is the model-facing tool name; non-empty.
	Name string `json:"name"`
	// Description is the model-facing description.
	Description string `json:"description"`
	// Parameters is the JSON Schema of the tool's arguments (a JSON object).
	// Assemble copies it, so an assembly never aliases a provider's bytes.
	Parameters json.RawMessage `json:"parameters"`
	// DeferLoading is passed through to providers that support deferred tool
	// loading ([new] deferLoading).
	DeferLoading bool `json:"deferLoading,omitempty"`
}

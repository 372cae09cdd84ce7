package systemprompt

import (
	"github.com/dshgo/harness/core"
)

// AssembleInput is the payload of AssembleEvent: the assembly built from the
// registered providers and the caller's AssembleContext.
type AssembleInput struct {
	// Assembly is the mutable assembly; listeners may edit it in place or
	// pass another one to next.
	Assembly *Assembly
	// Context is the caller's AssembleContext.
	Context AssembleContext
}

// AssembleEvent ("system-prompt/assemble") is the waterfall every Assemble
// call runs after ordering sections and tools (C6 step 10). It is
// dispatched to the assembly's scope: listeners registered through a scoped
// context see only that scope's (and its descendants') assemblies, global
// listeners see all. The returned *Assembly is authoritative, except that
// an effective complete section is restored afterwards as the sole section,
// and suppressed runtime context stays empty. Appended sections are not
// re-sorted. An error or panic fails the assembly.
var AssembleEvent = core.NewWaterfallEvent[AssembleInput, *Assembly]("system-prompt/assemble")

// ChangeKind says what kind of registration a Change is about.
type ChangeKind string

// Change kinds.
const (
	ChangeSection    ChangeKind = "section"
	ChangeContext    ChangeKind = "context"
	ChangeVariable   ChangeKind = "variable"
	ChangeTools      ChangeKind = "tools"
	ChangeSuppressor ChangeKind = "suppressor"
)

// Change is the payload of ChangeEvent: one registration added or removed.
type Change struct {
	// Scope is the layer the registration belongs to (nil: global).
	Scope *core.ScopeID
	// Kind is the registration kind.
	Kind ChangeKind
	// Name is the section, context or variable name; "" for tool providers
	// and suppressors.
	Name string
	// Removed is true when the registration was undone.
	Removed bool
}

// ChangeEvent ("system-prompt/change") is dispatched after every
// registration and removal (C4). It is a serial event so that a failing
// listener is seen: an error (or panic) from a listener rolls the
// registration back and is returned to the registering caller; on removal
// it is only logged. Listeners return handled=false to let the others run.
// The dispatch targets the registration's scope, so unscoped listeners see
// every change and scoped ones (without core.Global) the changes of their
// scope's chain.
var ChangeEvent = core.NewBailEvent[Change, struct{}]("system-prompt/change")

package subagent

import "github.com/dshgo/harness/core"

// Settlement is the payload of [Settled]: the child and its turn's outcome.
type Settlement struct {
	Info    Info
	Outcome Outcome
}

// Started is emitted to the parent's scope when a child has been created,
// before its first turn runs.
var Started = core.NewEmitEvent[Info]("subagent/start")

// Settled is emitted to the parent's scope each time a child's turn settles
// (once per turn), after a one-shot child was closed. A continuable
// child's parent is notified of the final content through it.
var Settled = core.NewEmitEvent[Settlement]("subagent/settle")

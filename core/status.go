package core

// StatusChange describes one fiber transition, for observers of the
// container (the analogue of Cordis's internal/status and fx's fxevent).
type StatusChange struct {
	// Fiber is the fiber that changed state.
	Fiber *Fiber
	// Plugin is the fiber's plugin name.
	Plugin string
	// From and To are the states before and after.
	From, To State
	// Err is the failure for To == StateFailed (nil otherwise).
	Err error
	// PendingOn lists missing services for To == StatePending.
	PendingOn []string
}

// StatusChanged is emitted on the root after every lifecycle transition
// (loading, active, failed, pending, disposed). Listeners run on the
// lifecycle queue: they must be quick and must not wait on lifecycle calls
// (Await given the listener's context returns ErrInTransition; Dispose and
// Update schedule).
// A fiber is created pending without an event; when it is first evaluated
// with services missing, and whenever the list of missing services changes
// while it stays pending, a pending→pending change carries PendingOn (what
// it now waits for). That is the one From == To change, deliberately: it is
// how an observer learns what a new fiber waits for.
var StatusChanged = NewEmitEvent[StatusChange]("core/status")

func (r *Root) status(f *Fiber, from, to State, err error, pendingOn []string) {
	if f.plugin == scopePlugin && len(StatusChanged.snapshot(r)) == 0 {
		return
	}
	StatusChanged.Emit(r.queueCtx, Target{root: r}, StatusChange{Fiber: f, Plugin: f.plugin.Name(), From: from, To: to, Err: err, PendingOn: pendingOn})
}

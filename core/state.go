package core

// State is a fiber's lifecycle state. The numbering follows Cordis (and dsh's
// boot audit): pending 0, loading 1, active 2, failed 3, disposed 4,
// unloading 5.
type State int32

// Fiber states.
const (
	// StatePending: waiting for injected services (or not yet applied).
	StatePending State = iota
	// StateLoading: config resolved, Apply running.
	StateLoading
	// StateActive: Apply returned nil; services and listeners are live.
	StateActive
	// StateFailed: config invalid or Apply failed; effects rolled back.
	StateFailed
	// StateDisposed: terminal; the fiber cannot be restarted.
	StateDisposed
	// StateUnloading: effects are being undone.
	StateUnloading
)

// String returns the lower-case state name used in logs and `harness plugins`.
func (s State) String() string {
	switch s {
	case StatePending:
		return "pending"
	case StateLoading:
		return "loading"
	case StateActive:
		return "active"
	case StateFailed:
		return "failed"
	case StateDisposed:
		return "disposed"
	case StateUnloading:
		return "unloading"
	}
	return "unknown"
}

// accepts reports whether a fiber in state s may register new effects:
// pending and loading (used synchronously by scopes and Apply) and active.
func (s State) accepts() bool {
	return s == StatePending || s == StateLoading || s == StateActive
}

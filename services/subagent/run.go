package subagent

import (
	"context"
	"fmt"
	"sync"

	"github.com/dshgo/harness/core"
)

// Run is a started child as its caller holds it: the id, the state of its
// current turn and its last outcome.
type Run struct {
	svc         *Service
	child       Child
	provider    string
	caps        []Capability
	parentScope *core.ScopeID
	closeOnce   sync.Once

	mu     sync.Mutex
	info   Info
	cancel context.CancelFunc
	done   chan struct{}
	last   *Outcome
}

// ID returns the child's id (its session id).
func (r *Run) ID() string { return r.info.ID }

// Info returns a snapshot of the child's description and state.
func (r *Run) Info() Info {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.info
}

// Wait blocks until the current turn settles and returns its outcome, or
// ctx's error.
func (r *Run) Wait(ctx context.Context) (Outcome, error) {
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	if done == nil {
		return Outcome{}, fmt.Errorf("agent %s has not run", r.info.ID)
	}
	select {
	case <-done:
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return *r.last, nil
}

// Interrupt stops the current turn, if one runs; it reports whether one did.
func (r *Run) Interrupt() bool { return r.interrupt() }

func (r *Run) interrupt() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.info.Running || r.cancel == nil {
		return false
	}
	r.cancel()
	return true
}

// safeTurn runs the child's turn; a panic becomes a failed outcome.
func (r *Run) safeTurn(ctx context.Context, message string) (out Outcome) {
	defer func() {
		if v := recover(); v != nil {
			out = Outcome{Status: StatusFailed, Error: fmt.Sprintf("provider %s panicked: %v", r.provider, v)}
		}
	}()
	return r.child.Turn(ctx, message)
}

package core

import (
	"context"
	"errors"
)

// How a lifecycle call made from inside the lifecycle is recognised without
// goroutine identity: by the context it is given. Core marks the contexts it
// hands out, and a wait ([Fiber.Await]) made with a marked context that
// would wait on the transition running its caller returns ErrInTransition.
//
//   - An activation context ([Context.Context], what Apply and disposers
//     use) carries its fiber: the wait is a self-wait while that fiber is in
//     transition (Apply running, or its unload under way), since the queue
//     cannot move until the caller returns. (A context of an earlier
//     activation is cancelled: waiting with it ends at once anyway.)
//   - The context of a [Go] body carries its goroutine: the wait is a
//     self-wait once the activation has ended, since the fiber's unload then
//     waits for the goroutine to return.
//   - The context given to [StatusChanged] listeners (they run on the
//     queue) marks a self-wait whenever the queue is being drained.
//
// Dispose and Update never wait (they schedule and return), so they need no
// mark. A context core did not hand out is a host's: its waits are bounded
// by the context alone.

// markKey is the context key of a *mark.
type markKey struct{}

type markKind uint8

const (
	markActivation markKind = iota // an activation context of fiber
	markGo                         // the context of a Go body of fiber
	markQueue                      // the context of StatusChanged listeners
)

// mark is what a context core hands out says about its holder.
type mark struct {
	root  *Root
	fiber *Fiber
	kind  markKind
}

// marked is a context core hands out (an activation's, a Go body's, the
// queue's) with its mark: one allocation.
type marked struct {
	context.Context
	mark mark
}

// Value returns the mark for markKey.
func (m *marked) Value(key any) any {
	if key == (markKey{}) {
		return &m.mark
	}
	return m.Context.Value(key)
}

// markOf returns the mark r left on ctx (nil for a host's context).
func (r *Root) markOf(ctx context.Context) *mark {
	m, _ := ctx.Value(markKey{}).(*mark)
	if m == nil || m.root != r {
		return nil
	}
	return m
}

// selfWaitLocked reports whether a wait made with ctx (marked m) would wait
// on the transition that runs its caller. r.mu is held.
func (m *mark) selfWaitLocked(ctx context.Context) bool {
	switch m.kind {
	case markQueue:
		return m.root.draining
	case markGo:
		return ctx.Err() != nil
	default:
		f := m.fiber
		return f.state == StateLoading || f.run != nil
	}
}

// activation returns a new activation context of f: a child of f.marked,
// so it costs what an unmarked one does.
func (r *Root) activation(f *Fiber) (context.Context, context.CancelFunc) {
	return context.WithCancel(&f.marked)
}

// waitFor blocks until cond (evaluated under r.mu) holds, bounded by ctx,
// driving the queue when nobody else does. A self-wait (see [mark]) returns
// ErrInTransition.
func (r *Root) waitFor(ctx context.Context, cond func() bool) error {
	if ctx == nil {
		return errors.New("core: nil context")
	}
	m := r.markOf(ctx)
	for {
		r.drain()
		r.mu.Lock()
		if cond() {
			r.mu.Unlock()
			return nil
		}
		if m != nil && m.selfWaitLocked(ctx) {
			r.mu.Unlock()
			return ErrInTransition
		}
		if !r.draining && len(r.queue) > 0 {
			r.mu.Unlock()
			continue // queued meanwhile: drive it
		}
		ch := r.settled
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			r.mu.Lock()
			self := m != nil && m.selfWaitLocked(ctx)
			r.mu.Unlock()
			if self {
				return ErrInTransition
			}
			return ctx.Err()
		}
	}
}

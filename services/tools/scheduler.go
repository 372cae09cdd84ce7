package tools

import (
	"context"
	"sync"
	"time"
)

// ExecutionMode reports whether call may overlap other calls (dsh A12): Parallel
// only when the visible tool has a concurrency classifier that returns true for
// these (valid) arguments; an unknown or hidden tool, invalid arguments, a
// missing classifier, false, or a panic all mean Exclusive.
func (r *Registry) ExecutionMode(call Call) ExecutionMode {
	r.mu.RLock()
	t := r.resolve(call.Name, call.Scope)
	r.mu.RUnlock()
	if t == nil || t.safe == nil {
		return Exclusive
	}
	e := &Execution{reg: r, call: call}
	if e.bind(t) != nil {
		return Exclusive
	}
	return modeOf(t, e.args)
}

func modeOf(t *Tool, args any) (m ExecutionMode) {
	if t == nil || t.safe == nil {
		return Exclusive
	}
	defer func() {
		if recover() != nil {
			m = Exclusive
		}
	}()
	if t.safe(args) {
		return Parallel
	}
	return Exclusive
}

// Scheduler runs the tool calls of one model step (dsh A12): policy (steps 1–8
// of Execute) and results (post-execute, finalize, Result) in model order, and
// the bodies of consecutive parallel calls overlapped, at most Limit at a time.
// An exclusive call is a barrier: it waits until every started body is done
// and runs alone. Cancelling ctx stops new starts; started bodies are always
// awaited, and calls not yet dispatched end as ABORTED_BEFORE_DISPATCH.
type Scheduler struct {
	Registry *Registry
	// Limit bounds overlapped bodies; <= 0 uses the registry's configured
	// maximum (default 10); 1 runs every body serially.
	Limit int
	// OnResult, if set, is called on the scheduling goroutine with each final
	// outcome, in model order, as soon as it and every earlier one are final.
	OnResult func(index int, o *Outcome)
}

type slot struct {
	e    *Execution
	done chan struct{} // closed when the dispatch is over; nil when not dispatched in the pool
}

// Run executes calls and returns their outcomes in the same order. It returns
// only when every body it started has returned.
func (s Scheduler) Run(ctx context.Context, calls []Call) []*Outcome {
	r := s.Registry
	if ctx == nil {
		ctx = context.Background()
	}
	limit := s.Limit
	if limit <= 0 {
		limit = r.maxParallel
	}
	out := make([]*Outcome, len(calls))
	slots := make([]slot, len(calls))
	starts := make([]time.Time, len(calls))
	ends := make([]time.Time, len(calls)) // written by the dispatching goroutine before done closes
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	next := 0 // first slot not yet finished
	finishUpTo := func(n int, wait bool) {
		for ; next < n; next++ {
			sl := slots[next]
			if sl.done != nil {
				if !wait {
					select {
					case <-sl.done:
					default:
						return
					}
				}
				<-sl.done
			}
			out[next] = r.finish(sl.e)
			if ends[next].IsZero() {
				ends[next] = time.Now()
			}
			out[next].Elapsed = ends[next].Sub(starts[next])
			if sl.e != nil {
				out[next].Elapsed = max(0, out[next].Elapsed-sl.e.waited)
			}
			if s.OnResult != nil {
				s.OnResult(next, out[next])
			}
		}
	}
	for i, call := range calls {
		starts[i] = time.Now()
		e := r.prepare(ctx, call)
		slots[i].e = e
		if e.route != routeDispatch {
			ends[i] = time.Now()
			finishUpTo(i+1, false)
			continue
		}
		if modeOf(e.tool, e.args) == Exclusive || limit == 1 {
			wg.Wait()
			finishUpTo(i, true)
			r.dispatch(e)
			ends[i] = time.Now()
			finishUpTo(i+1, true)
			continue
		}
		done := make(chan struct{})
		slots[i].done = done
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { ends[i] = time.Now(); <-sem; close(done); wg.Done() }()
			defer func() {
				if p := recover(); p != nil {
					e.final(errorOutcome(r.recovered("tool dispatch", p)))
				}
			}()
			r.dispatch(e)
		}()
		finishUpTo(i+1, false)
	}
	wg.Wait()
	finishUpTo(len(calls), true)
	return out
}

package subprocess

import (
	"context"
	"fmt"
	"time"
)

// Result is what Run returns: the outcome and the collected streams (nil for
// a stream not in collect mode).
type Result struct {
	Outcome Outcome
	Stdout  *CollectedOutput
	Stderr  *CollectedOutput
	// Sandbox is what the sandbox enforced for the run (Handle.Sandbox).
	Sandbox SandboxReport
	// Protected lists the protected paths the sandboxed command created,
	// changed or deleted; each was undone (Handle.Protected). Empty when
	// nothing was touched, or when the range could not be emptied.
	Protected []ProtectedChange
	// NetworkRefused are the requests the sandbox's network proxy refused
	// while the command ran (Handle.NetworkRefused).
	NetworkRefused []string
}

// Run is the foreground path a tool wants: Spawn, wait until the direct
// child settles, then make sure nothing the spawn started is still alive
// (Terminate if the range is not empty, and wait for it to empty, at most
// twice Grace plus one second).
//
// A timeout is spec.Context's deadline: when it ends the range is
// terminated and Run returns the outcome (typically signal SIGTERM) with a
// nil error; the caller tells a timeout from other cancellation with
// context.Cause. Run returns an error only for spawn failures (the Spawn
// errors) or a range that could not be emptied.
func (r *Runtime) Run(spec Spec) (Result, error) {
	h, err := r.spawn(spec)
	if err != nil {
		return Result{}, err
	}
	if spec.Started != nil {
		spec.Started(h.collected)
	}
	h.wait() // on this goroutine: one handoff less than Spawn + <-Done

	out, err := h.Outcome()
	res := Result{Outcome: out, Stdout: h.collected.Stdout, Stderr: h.collected.Stderr, Sandbox: h.sandbox}
	if err != nil {
		return res, err
	}
	res.NetworkRefused = h.NetworkRefused()
	if gone, _ := h.WaitForExit(immediate); gone {
		res.Protected = h.Protected()
		return res, nil
	}
	h.Terminate()
	ctx, cancel := context.WithTimeout(context.Background(), 2*spec.Grace+time.Second)
	defer cancel()
	gone, err := h.WaitForExit(ctx)
	if err == nil && !gone {
		err = fmt.Errorf("subprocess: pid %d: managed range still alive after terminate", h.pid)
	}
	res.Protected = h.Protected()
	return res, err
}

// immediate is an already-cancelled context: WaitForExit(immediate) is a
// single probe.
var immediate = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

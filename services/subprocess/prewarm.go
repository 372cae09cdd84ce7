package subprocess

import (
	"context"
	"time"
)

// prewarmTimeout bounds a Prewarm.
const prewarmTimeout = 30 * time.Second

// Prewarm prepares now what the first command under policy p (nil: none)
// in dir would otherwise set up one piece after the other when it starts:
// the watchdog, the sandbox backend probe and, with shared bwrap
// sandboxes, the sandbox (zygote) of that policy and workspace. It does so
// by running `true` there, and returns when it ran or failed (failures are
// dropped: the command that needs the piece reports its own error). A
// caller that expects commands soon, such as the bash tool at the start of
// an agent session, runs it in the background while the first model
// request is in flight. Bounded by ctx, by prewarmTimeout and by Close.
func (r *Runtime) Prewarm(ctx context.Context, p *SandboxPolicy, dir string) {
	if r.isClosed() || ctx.Err() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, prewarmTimeout)
	defer cancel()
	var policy *SandboxPolicy
	if p.Enabled() {
		c := p.Clone()
		policy = &c
	}
	_, _ = r.Run(Spec{Context: ctx, Argv: []string{"true"}, Dir: dir, Sandbox: policy,
		Stdin: IgnoreStdin(), Stdout: Collect(256), Stderr: Collect(256), Grace: 100 * time.Millisecond})
}

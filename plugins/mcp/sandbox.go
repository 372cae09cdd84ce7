package mcp

import (
	"slices"

	"github.com/dshgo/harness/services/subprocess"
)

// containment is the sandbox policy of a stdio server, and why a server
// runs without one.
type containment struct {
	// policy is nil for an unsandboxed server.
	policy *subprocess.SandboxPolicy
	// warning says why a server runs unsandboxed while the deployment
	// sandboxes commands ("" otherwise).
	warning string
}

// containmentOf is the one containment policy applied to a stdio server:
// the deployment's (the subprocess row's sandbox, which bash calls run
// under; the workspace is the server's cwd) unless the entry sets its own.
// An entry's own policy keeps the deployment's denyRead, so no entry can
// unhide a secret; `sandbox: {mode: off}` runs the server unsandboxed, with
// a warning when the deployment sandboxes. base is the deployment's policy.
func containmentOf(base subprocess.SandboxPolicy, own *subprocess.SandboxPolicy) containment {
	switch {
	case own == nil:
		if !base.Enabled() {
			return containment{}
		}
		return containment{policy: &base}
	case !own.Enabled():
		if base.Enabled() {
			return containment{warning: "runs unsandboxed: its entry sets sandbox mode off (bash calls run in the " + string(base.Mode) + " sandbox)"}
		}
		return containment{}
	}
	p := own.Clone()
	for _, d := range base.DenyRead {
		if !slices.Contains(p.DenyRead, d) {
			p.DenyRead = append(p.DenyRead, d)
		}
	}
	return containment{policy: &p}
}

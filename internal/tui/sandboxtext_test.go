package tui

import (
	"testing"

	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/subprocess/sandbox"
)

// TestDescribeSandboxNamesTheNetworkOnlyWhenEnforced: /permissions says
// plainly that commands run unsandboxed with the sandbox off, that they
// fail to start when no backend works, and names the network only when a
// backend enforces the policy.
func TestDescribeSandboxNamesTheNetworkOnlyWhenEnforced(t *testing.T) {
	t.Parallel()
	ws := subprocess.SandboxPolicy{Mode: subprocess.SandboxWorkspaceWrite}
	for _, tc := range []struct {
		pol  subprocess.SandboxPolicy
		rep  subprocess.SandboxReport
		want string
	}{
		{subprocess.SandboxPolicy{Mode: subprocess.SandboxOff}, sandbox.Unsandboxed("sandbox mode is off"), "off (commands run unsandboxed)"},
		{ws, sandbox.Unsandboxed("no backend"), "workspace-write required, but no backend works here: sandboxed commands fail to start"},
		{ws, sandbox.Report{Backend: "bwrap", Enforcement: sandbox.EnforcementFull}, "workspace-write, network off, bwrap: full"},
	} {
		if got := describeSandbox(tc.pol, tc.rep); got != tc.want {
			t.Errorf("describeSandbox(%v, %v) = %q, want %q", tc.pol.Mode, tc.rep, got, tc.want)
		}
	}
}

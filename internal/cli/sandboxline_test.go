package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/subprocess/sandbox"
)

// TestDescribeSandboxNeverClaimsWhatNothingEnforces: check's sandbox line
// names the network only when a backend enforces the policy; a policy that
// is on but has no working backend says that commands fail to start, and
// warns.
func TestDescribeSandboxNeverClaimsWhatNothingEnforces(t *testing.T) {
	t.Parallel()
	on := subprocess.SandboxPolicy{Mode: subprocess.SandboxWorkspaceWrite}
	unavailable := sandbox.Unsandboxed((&sandbox.UnavailableError{Causes: []error{errors.New("bwrap: not installed")}}).Error())
	line, warning := describeSandbox(on, unavailable, "", false)
	wantLine := "sandbox: workspace-write required, but no backend works here: sandboxed commands fail to start\n  - " + unavailable.Reasons[0]
	wantWarning := "the sandbox (workspace-write) has no working backend here: every sandboxed command the agent runs fails to start; " +
		"install bubblewrap, or set sandbox: {mode: off} in the subprocess row to run commands unsandboxed"
	if line != wantLine || warning != wantWarning {
		t.Errorf("no backend:\n got %q\n     %q\nwant %q\n     %q", line, warning, wantLine, wantWarning)
	}

	off := subprocess.SandboxPolicy{Mode: subprocess.SandboxOff}
	for _, tc := range []struct {
		backend string
		failed  bool
		want    string
	}{
		{"bwrap", false, "sandbox: off: commands run unsandboxed (backend bwrap available)"},
		{"", true, "sandbox: off: commands run unsandboxed (no backend works here)"},
		{"", false, "sandbox: off: commands run unsandboxed"},
	} {
		line, warning := describeSandbox(off, sandbox.Unsandboxed("sandbox mode is off"), tc.backend, tc.failed)
		if line != tc.want || warning == "" {
			t.Errorf("off %+v: got %q, warning %q", tc, line, warning)
		}
	}

	partial := sandbox.Report{Backend: "landlock", Enforcement: sandbox.EnforcementPartial, Reasons: []string{"no PID namespace "}}
	line, warning = describeSandbox(subprocess.SandboxPolicy{Mode: subprocess.SandboxReadOnly, Network: subprocess.SandboxNetwork{Mode: subprocess.SandboxNetworkOn}}, partial, "", false)
	if want := "sandbox: read-only, network on, via landlock: partial\n  - no PID namespace"; line != want || warning != "" {
		t.Errorf("partial: got %q %q, want %q", line, warning, want)
	}
}

// TestDescribeSandboxWithoutAnOSSandboxSaysUnsandboxedLoudly: on a
// platform without an OS sandbox (Windows: the none backend) the line says
// UNSANDBOXED and the warning says what that means and that commands ask.
func TestDescribeSandboxWithoutAnOSSandboxSaysUnsandboxedLoudly(t *testing.T) {
	t.Parallel()
	on := subprocess.SandboxPolicy{Mode: subprocess.SandboxWorkspaceWrite}
	line, warning := describeSandbox(on, sandbox.Unsandboxed(sandbox.NoOSSandbox), "", false)
	if want := "sandbox: workspace-write requested, but this platform has no OS sandbox: commands run UNSANDBOXED"; line != want {
		t.Errorf("line = %q, want %q", line, want)
	}
	for _, s := range []string{"UNSANDBOXED", "your user's full rights", "asks before each command"} {
		if !strings.Contains(warning, s) {
			t.Errorf("warning %q does not say %q", warning, s)
		}
	}
	off := subprocess.SandboxPolicy{Mode: subprocess.SandboxOff}
	if line, _ := describeSandbox(off, sandbox.Unsandboxed("sandbox mode is off"), sandbox.BackendNone, false); line != "sandbox: off: commands run unsandboxed (this platform has no OS sandbox)" {
		t.Errorf("off: %q", line)
	}
}

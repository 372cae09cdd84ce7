package sandbox

import (
	"slices"
	"testing"
)

// TestNoneBackendRunsTheCommandAsItIsAndReportsNoOSSandbox: the backend of
// a platform without an OS sandbox (Windows) changes nothing in the
// command and says, in every report, that nothing is enforced, so that
// nothing treats its commands as sandboxed.
func TestNoneBackendRunsTheCommandAsItIsAndReportsNoOSSandbox(t *testing.T) {
	t.Parallel()
	var b Backend = noneBackend{}
	p := Policy{Mode: ModeWorkspaceWrite}
	want := Report{Backend: "none", Enforcement: EnforcementNone, Reasons: []string{NoOSSandbox}}
	if got := b.Check(p); !slices.Equal(got.Reasons, want.Reasons) || got.Backend != want.Backend || got.Enforcement != want.Enforcement || !got.NoOS() {
		t.Errorf("Check = %+v, want %+v", got, want)
	}
	req := Request{Policy: p, Dir: `C:\work`, Path: `C:\Windows\System32\cmd.exe`, Argv: []string{"cmd", "/c", "echo hi"}, Env: []string{"A=1"}}
	cmd, rep, err := b.Wrap(req)
	if err != nil {
		t.Fatal(err)
	}
	if cmd.Path != req.Path || !slices.Equal(cmd.Args, req.Argv) || !slices.Equal(cmd.Env, req.Env) || cmd.Start != nil || cmd.Zygote != nil || cmd.ReadOnly != nil {
		t.Errorf("Wrap changed the command: %+v", cmd)
	}
	if !rep.NoOS() || rep.String() != "none: none ("+NoOSSandbox+")" {
		t.Errorf("Wrap report = %q", rep.String())
	}
	if Unsandboxed("sandbox mode is off").NoOS() {
		t.Error("a sandbox turned off is reported as a platform without one")
	}
}

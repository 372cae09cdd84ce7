package subprocess

import (
	"strings"
	"testing"
	"time"
)

// TestSandboxDenyReadInvalidGlob: a denyRead pattern that does not parse is
// refused with its index (it would hide nothing when a command starts);
// literal paths and valid patterns pass.
func TestSandboxDenyReadInvalidGlob(t *testing.T) {
	t.Parallel()
	deny := []string{"~/.ssh", "**/.env{,.*}", "[", "/a/b"}
	err := (Options{Sandbox: SandboxPolicy{Mode: SandboxWorkspaceWrite, DenyRead: deny}}).Validate()
	want := `sandbox.denyRead[2]: invalid glob "[": syntax error in pattern (an unclosed [ or {, or a trailing \; write \[ for a literal [)`
	if err == nil || err.Error() != want {
		t.Fatalf("Validate = %v\nwant %s", err, want)
	}
	for _, bad := range []string{"~/x{a,b", "**/.env\\", "/etc/[a-"} {
		if err := (SandboxPolicy{Mode: SandboxReadOnly, DenyRead: []string{bad}}).Validate(); err == nil || !strings.HasPrefix(err.Error(), "denyRead[0]: invalid glob ") {
			t.Errorf("%q: Validate = %v", bad, err)
		}
	}
	ok := []string{"~/.ssh", "**/.env{,.*}", "/a/[ab]c", "~/x\\[1\\]", "*.pem"}
	if err := (SandboxPolicy{Mode: SandboxReadOnly, DenyRead: ok}).Validate(); err != nil {
		t.Fatalf("valid patterns: %v", err)
	}
	// A spawn's own policy is checked the same way.
	rt := newRuntime(t, Options{})
	spec := collectSpec(nil, "true", 64, time.Second)
	spec.Sandbox = &SandboxPolicy{Mode: SandboxReadOnly, DenyRead: []string{"x", "a{"}}
	if _, err = rt.Spawn(spec); err == nil || !strings.Contains(err.Error(), `sandbox.denyRead[1]: invalid glob "a{"`) {
		t.Fatalf("Spawn = %v", err)
	}
}

package permission

import (
	"encoding/json"
	"runtime"
	"testing"
	"weak"

	"github.com/dshgo/harness/core"
)

// SetPermissionMode (an approved plan) switches one session and its
// subagents out of plan mode; another session and the unscoped calls stay
// in the configured mode; deny rules hold in the new mode; a bad mode is
// an error naming it; a collected scope's entry goes.
func TestSetPermissionModeSwitchesOneSession(t *testing.T) {
	spec := defaultSpec(t.TempDir())
	spec.Mode = ModePlan
	spec.Deny = []string{"write(secret.txt)"}
	pol, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	p := &plugin{policy: pol, grants: map[weak.Pointer[core.ScopeID]]*Policy{}, modes: map[weak.Pointer[core.ScopeID]]*Policy{}}
	session, other := core.NewScopeID("s1", nil), core.NewScopeID("s2", nil)
	child := core.NewScopeID("s1/sub", session)
	if err := p.SetPermissionMode(session, "acceptEdits"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		scope *core.ScopeID
		want  string
	}{{session, "acceptEdits"}, {child, "acceptEdits"}, {other, "plan"}, {nil, "plan"}} {
		if got := p.PermissionMode(tt.scope); got != tt.want {
			t.Errorf("PermissionMode(%v) = %s, want %s", tt.scope, got, tt.want)
		}
		if got := p.InForce(tt.scope).Mode; string(got) != tt.want {
			t.Errorf("InForce(%v).Mode = %s, want %s", tt.scope, got, tt.want)
		}
	}
	write := func(path string) Call {
		args, _ := json.Marshal(map[string]string{"file_path": path, "content": "x"})
		return Call{Tool: "write", Args: args, Cwd: spec.Cwd}
	}
	if v := p.policyFor(child).Evaluate(write("a.txt")); v.Decision != Allow {
		t.Errorf("write a.txt in the switched session: %v (%s)", v.Decision, v.Reason)
	}
	if v := p.policyFor(other).Evaluate(write("a.txt")); v.Decision != Deny {
		t.Errorf("write a.txt in the other session (plan): %v", v.Decision)
	}
	if v := p.policyFor(session).Evaluate(write("secret.txt")); v.Decision != Deny || v.Rule != "write(secret.txt)" {
		t.Errorf("write secret.txt after the switch: %v by %q", v.Decision, v.Rule)
	}
	if err := p.SetPermissionMode(session, "yolo"); err == nil {
		t.Error("SetPermissionMode accepted the mode yolo")
	}
	if err := p.SetPermissionMode(nil, "bypassPermissions"); err != nil || p.PermissionMode(nil) != "bypassPermissions" || p.PermissionMode(other) != "plan" {
		t.Errorf("unscoped switch: %v, unscoped %s, other %s", err, p.PermissionMode(nil), p.PermissionMode(other))
	}
	func() { _ = p.SetPermissionMode(core.NewScopeID("gone", nil), "default") }()
	runtime.GC()
	_ = p.SetPermissionMode(other, "default") // drops collected scopes' entries
	if n := len(p.modes); n != 2 {
		t.Errorf("%d scope modes after a session was collected, want 2 (s1, s2)", n)
	}
	runtime.KeepAlive(session)
	runtime.KeepAlive(child)
}

// The model is told of a switched mode once, at the next prompt of the
// switched session: not at a prompt that runs under the mode of the
// previous one, not in another session, and at a session's first prompt
// only when the mode differs from the configured one.
func TestModeChangeTellsTheModelOnceAtTheNextPrompt(t *testing.T) {
	pol, err := New(defaultSpec(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	p := &plugin{policy: pol, grants: map[weak.Pointer[core.ScopeID]]*Policy{}, modes: map[weak.Pointer[core.ScopeID]]*Policy{}}
	s1, s2, s3 := core.NewScopeID("s1", nil), core.NewScopeID("s2", nil), core.NewScopeID("s3", nil)
	if n := p.modeChange(s1); n != "" {
		t.Errorf("first prompt in the configured mode: %q", n)
	}
	if err := p.SetPermissionMode(s1, "plan"); err != nil {
		t.Fatal(err)
	}
	if n := p.modeChange(s1); n != modeNotices["plan"] {
		t.Errorf("prompt after the switch to plan: %q", n)
	}
	if n := p.modeChange(s1); n != "" {
		t.Errorf("second prompt in plan: %q", n)
	}
	if n := p.modeChange(s2); n != "" {
		t.Errorf("another session's prompt: %q", n)
	}
	if err := p.SetPermissionMode(s1, "acceptEdits"); err != nil {
		t.Fatal(err)
	}
	if err := p.SetPermissionMode(s1, "plan"); err != nil {
		t.Fatal(err)
	}
	if n := p.modeChange(s1); n != "" {
		t.Errorf("switched away and back between two prompts: %q", n)
	}
	if err := p.SetPermissionMode(s3, "bypassPermissions"); err != nil {
		t.Fatal(err)
	}
	if n := p.modeChange(s3); n != modeNotices["bypassPermissions"] {
		t.Errorf("first prompt after a switch before it: %q", n)
	}
	if n := p.modeChange(nil); n != "" {
		t.Errorf("unscoped: %q", n)
	}
	for _, m := range []Mode{ModeDefault, ModeAcceptEdits, ModePlan, ModeDontAsk} {
		if modeNotices[string(m)] == "" {
			t.Errorf("no notice for mode %s", m)
		}
	}
	runtime.KeepAlive(s1)
	runtime.KeepAlive(s2)
	runtime.KeepAlive(s3)
}

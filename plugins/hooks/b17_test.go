package hooks_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/internal/policytest"
	"github.com/dshgo/harness/plugins/hooks"
	"github.com/dshgo/harness/plugins/permission"
	"github.com/dshgo/harness/services/tools"
)

// TestB17DenyWinsOnEveryPath is case B17: a deny wins on every path, whatever
// the hook order and the plugin order; the audit hook runs for every call; the
// redaction post-hook's replacement is what the result carries.
func TestB17DenyWinsOnEveryPath(t *testing.T) {
	t.Parallel()
	hookOrders := [][]string{
		{"allow-all.sh", "deny-rm-rf.sh", "audit.sh"},
		{"audit.sh", "deny-rm-rf.sh", "allow-all.sh"},
		{"deny-rm-rf.sh", "allow-all.sh", "audit.sh"},
	}
	for _, order := range hookOrders {
		for _, permissionFirst := range []bool{true, false} {
			name := strings.Join(order, ",")
			if permissionFirst {
				name = "permission first/" + name
			} else {
				name = "hooks first/" + name
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				b17(t, order, permissionFirst)
			})
		}
	}
}

func b17(t *testing.T, order []string, permissionFirst bool) {
	dir := t.TempDir()
	target := filepath.Join(dir, "b17-target")
	if err := os.MkdirAll(target, 0o755); err != nil {
		t.Fatal(err)
	}
	keep := filepath.Join(target, "keep")
	if err := os.WriteFile(keep, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	perm := permission.Config{}
	perm.SetDefaults()
	perm.Cwd = dir
	perm.Allow = []string{"bash(echo *)"}
	perm.Deny = []string{"bash(rm -rf *)"}
	var pre []hooks.MatcherGroup
	for _, name := range order {
		pre = append(pre, group("", examples(t, name)))
	}
	hk := hooksConfig(dir, pre, []hooks.MatcherGroup{group("", examples(t, "redact-secrets.sh"))})
	mounts := []mount{{Plugin: permission.Plugin, Config: perm}, {Plugin: hooks.Plugin, Config: hk}}
	if !permissionFirst {
		mounts[0], mounts[1] = mounts[1], mounts[0]
	}
	reg := harness(t, append(mounts, headless)...)

	// One model step with two parallel calls.
	rm := "rm -rf " + target
	outs := tools.Scheduler{Registry: reg}.Run(context.Background(), []tools.Call{
		{ID: "c1", Name: "bash", Arguments: `{"command":"echo ok"}`},
		{ID: "c2", Name: "bash", Arguments: `{"command":` + quoteJSON(rm) + `}`},
	})
	if text(outs[0]) != "ok\n" || outs[0].IsError {
		t.Errorf("echo ok: %q", text(outs[0]))
	}
	assertDenied(t, "parallel step", outs[1])
	audit, _ := os.ReadFile(filepath.Join(dir, ".harness-audit.log"))
	if string(audit) != "PreToolUse Bash\nPreToolUse Bash\n" {
		t.Errorf("audit log after the step: %q", audit)
	}

	// (a) the registry's programmatic API, as a plugin would use it.
	assertDenied(t, "Execute", run(t, reg, "c3", rm))
	// (b) a delegated path: a call made in a sub-agent's scope.
	sub := core.NewScopeID("sub-agent", core.NewScopeID("agent", nil))
	assertDenied(t, "sub-agent", reg.Execute(context.Background(), tools.Call{ID: "c4", Name: "bash", Arguments: `{"command":` + quoteJSON(rm) + `}`, Scope: sub}))
	// (c) a retry.
	assertDenied(t, "retry", run(t, reg, "c3", rm))
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("%s is gone: %v", keep, err)
	}

	// The redaction post-hook's replacement is what the result carries.
	o := run(t, reg, "c5", "echo sk-b17-secret")
	if text(o) != "[REDACTED]\n" || o.IsError {
		t.Errorf("redaction: %q", text(o))
	}
	audit, _ = os.ReadFile(filepath.Join(dir, ".harness-audit.log"))
	if n := strings.Count(string(audit), "PreToolUse Bash\n"); n != 6 {
		t.Errorf("audit ran %d times for 6 calls: %q", n, audit)
	}
}

func assertDenied(t *testing.T, path string, o *tools.Outcome) {
	t.Helper()
	c := text(o)
	if !o.IsError || !(strings.Contains(c, "rm -rf is not allowed by policy") || strings.Contains(c, `rule "bash(rm -rf *)"`)) {
		t.Errorf("%s: rm was not denied with a reason: %q", path, c)
	}
}

func quoteJSON(s string) string { return policytest.Quote(s) }

// TestB17RuleDenyBeatsHookAllow: rules deny, every hook allows.
func TestB17RuleDenyBeatsHookAllow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	perm := permission.Config{}
	perm.SetDefaults()
	perm.Mode = permission.ModeBypass
	perm.Deny = []string{"bash(rm -rf *)"}
	hk := hooksConfig(dir, []hooks.MatcherGroup{group("", examples(t, "allow-all.sh"))}, nil)
	reg := harness(t, mount{Plugin: hooks.Plugin, Config: hk}, mount{Plugin: permission.Plugin, Config: perm}, headless)
	o := run(t, reg, "c1", "true && rm -rf "+filepath.Join(dir, "x"))
	if want := `Error: permission denied: rule "bash(rm -rf *)" in the deny list matches this call`; text(o) != want {
		t.Fatalf("content %q, want %q", text(o), want)
	}
}

// TestB17HookDenyBeatsRuleAllow: rules allow everything, a hook denies.
func TestB17HookDenyBeatsRuleAllow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	perm := permission.Config{}
	perm.SetDefaults()
	perm.Allow = []string{"bash"}
	hk := hooksConfig(dir, []hooks.MatcherGroup{group("bash", examples(t, "deny-rm-rf.sh"))}, nil)
	reg := harness(t, mount{Plugin: permission.Plugin, Config: perm}, mount{Plugin: hooks.Plugin, Config: hk}, headless)
	o := run(t, reg, "c1", "rm -rf "+filepath.Join(dir, "x"))
	if want := "Error: rm -rf is not allowed by policy; delete files one by one or ask the user"; text(o) != want {
		t.Fatalf("content %q, want %q", text(o), want)
	}
}

package permission_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/internal/policytest"
	"github.com/dshgo/harness/plugins/permission"
	toolbash "github.com/dshgo/harness/plugins/tool-bash"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/subprocess/sandbox"
	"github.com/dshgo/harness/services/tools"
)

// sandboxedHarness boots subprocess-local with the given sandbox mode (the
// backend the probe picks), the real bash tool in work, the permission
// plugin with cfg, and headless approval. Without a working sandbox backend
// the test fails in CI (.ci/run installs bubblewrap) and skips elsewhere.
func sandboxedHarness(t *testing.T, mode subprocess.SandboxMode, work string, cfg permission.Config) *tools.Registry {
	t.Helper()
	if mode != subprocess.SandboxOff {
		if _, errs := sandbox.Probe("auto"); errs != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("no sandbox backend in CI (.ci/run installs bubblewrap): %v", errs)
			}
			t.Skipf("no sandbox backend here: %v", errs)
		}
	}
	var sub subprocess.Options
	sub.SetDefaults()
	sub.Sandbox.Mode = mode
	var bashCfg toolbash.Config
	bashCfg.SetDefaults()
	bashCfg.Cwd = work
	return policytest.Boot(t, policytest.Mount{Plugin: subprocess.Plugin, Config: sub}, policytest.Mount{Plugin: tools.Plugin},
		policytest.Mount{Plugin: toolbash.Plugin, Config: bashCfg}, policytest.Mount{Plugin: permission.Plugin, Config: cfg}, headless)
}

func bashCall(t *testing.T, reg *tools.Registry, args map[string]string) (string, bool) {
	t.Helper()
	if args["description"] == "" {
		args["description"] = "sandbox row"
	}
	raw, _ := json.Marshal(args)
	o := reg.Execute(t.Context(), tools.Call{ID: "s", Name: "bash", Arguments: string(raw)})
	return policytest.Text(o), o.IsError
}

// TestAutoAllowSandboxed: with the default autoAllowSandboxed, a bash call
// in an enforced workspace-write sandbox runs without asking (headless, no
// allow rule) unless a deny or ask rule matches; an unknown command runs
// too, and the sandbox, not a rule, keeps it inside the workspace; a call
// that asks for "sandbox":"off" is asked (headless: denied) unless an allow
// rule covers it; without a sandbox, or with autoAllowSandboxed off,
// nothing is auto-allowed.
func TestAutoAllowSandboxed(t *testing.T) {
	t.Setenv("POLICY_SANDBOX_TEST_API_KEY", "harness-secret-8f3a")
	work, victim := victims(t)
	cfg := config(work, nil, []string{"bash(git push *)"}, []string{rmDeny})
	reg := sandboxedHarness(t, subprocess.SandboxWorkspaceWrite, work, cfg)

	// The first attack: allowed in the sandbox, and it shows nothing
	// of the harness's environment.
	text, isErr := bashCall(t, reg, map[string]string{"command": `echo "$(</proc/$PPID/environ)"; echo done`})
	if isErr || !strings.Contains(text, "done") || strings.Contains(text, "harness-secret-8f3a") {
		t.Fatalf("parent environ in the sandbox: %q", text)
	}

	if text, isErr := bashCall(t, reg, map[string]string{"command": "echo built > out.txt && cat out.txt"}); isErr || !strings.Contains(text, "built") {
		t.Fatalf("sandboxed write in the workspace: %q", text)
	}
	if b, err := os.ReadFile(filepath.Join(work, "out.txt")); err != nil || string(b) != "built\n" {
		t.Fatalf("out.txt = %q, %v", b, err)
	}
	// Unknown program: not asked in the sandbox; the sandbox stops the write.
	text, _ = bashCall(t, reg, map[string]string{"command": "x=rm; $x -r " + victim + "/sub; echo ran"})
	if strings.Contains(text, "requires approval") || !strings.Contains(text, "ran") {
		t.Fatalf("unknown command in the sandbox: %q", text)
	}
	if _, err := os.Stat(filepath.Join(victim, "sub", "file")); err != nil {
		t.Fatalf("the sandbox let the unknown command delete outside the workspace: %v", err)
	}
	// Deny and ask rules still decide.
	if text, isErr := bashCall(t, reg, map[string]string{"command": "rm -fr " + victim}); !isErr || !strings.Contains(text, "permission denied: rule") {
		t.Fatalf("deny rule in the sandbox: %q", text)
	}
	if text, isErr := bashCall(t, reg, map[string]string{"command": "git push origin main"}); !isErr || !strings.Contains(text, `rule "bash(git push *)" is in the ask list`) {
		t.Fatalf("ask rule in the sandbox: %q", text)
	}
	// Escalation: asked, headless denied, nothing written.
	text, isErr = bashCall(t, reg, map[string]string{"command": "echo x > " + victim + "/escalated", "sandbox": "off", "justification": "needs to write outside"})
	if !isErr || !strings.Contains(text, "asks to run outside the sandbox") {
		t.Fatalf("escalation: %q", text)
	}
	if _, err := os.Stat(filepath.Join(victim, "escalated")); !os.IsNotExist(err) {
		t.Fatalf("the escalated call ran: %v", err)
	}
	// A workdir outside the workspace is asked even in the sandbox.
	if text, isErr := bashCall(t, reg, map[string]string{"command": "ls", "workdir": victim}); !isErr || !strings.Contains(text, "outside the workspace") {
		t.Fatalf("workdir outside: %q", text)
	}
}

// TestEscalationNeedsAPerson: leaving the sandbox is a person's decision,
// never a pattern's. An allow rule that covers the command does not cover a
// call with "sandbox":"off" (headless: denied, nothing written, the hint
// names the `unsandboxed` form); only a rule written with that suffix does,
// and then the call runs outside the sandbox.
func TestEscalationNeedsAPerson(t *testing.T) {
	work, victim := victims(t)
	target := filepath.Join(victim, "escalated")
	call := map[string]string{"command": "touch " + target, "sandbox": "off", "justification": "writes outside"}

	reg := sandboxedHarness(t, subprocess.SandboxWorkspaceWrite, work, config(work, []string{"bash(touch *)"}, nil, nil))
	text, isErr := bashCall(t, reg, call)
	if !isErr || !strings.Contains(text, "person's decision") || !strings.Contains(text, `"bash(touch *) unsandboxed"`) {
		t.Fatalf("escalation covered by a plain allow rule: %q", text)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("a plain allow rule let the call leave the sandbox: %v", err)
	}

	reg = sandboxedHarness(t, subprocess.SandboxWorkspaceWrite, work, config(work, []string{"bash(touch *) unsandboxed"}, nil, nil))
	if text, isErr := bashCall(t, reg, call); isErr {
		t.Fatalf("escalation covered by an unsandboxed rule: %q", text)
	}
	if _, err := os.Stat(target); err != nil {
		t.Fatalf("the unsandboxed rule's call did not run outside the sandbox: %v", err)
	}
}

// TestNoAutoAllowWithoutSandbox: sandbox mode off, or autoAllowSandboxed
// false: an uncovered call is asked (headless: denied) and does not run.
func TestNoAutoAllowWithoutSandbox(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode subprocess.SandboxMode
		auto bool
	}{{"sandbox off", subprocess.SandboxOff, true}, {"autoAllowSandboxed false", subprocess.SandboxWorkspaceWrite, false}} {
		t.Run(tc.name, func(t *testing.T) {
			work, _ := victims(t)
			cfg := config(work, nil, nil, nil)
			cfg.AutoAllowSandboxed = tc.auto
			reg := sandboxedHarness(t, tc.mode, work, cfg)
			text, isErr := bashCall(t, reg, map[string]string{"command": "echo x > out.txt"})
			if !isErr || !strings.Contains(text, "requires approval") {
				t.Fatalf("want an ask, got %q", text)
			}
			if _, err := os.Stat(filepath.Join(work, "out.txt")); !os.IsNotExist(err) {
				t.Fatalf("the asked call ran: %v", err)
			}
			// An unknown command: asked for being unknown when unsandboxed,
			// asked by the mode in the sandbox; never allowed.
			text, isErr = bashCall(t, reg, map[string]string{"command": "x=echo; $x hi"})
			if !isErr || !strings.Contains(text, "requires approval") ||
				(tc.mode == subprocess.SandboxOff) != strings.Contains(text, "is not static") {
				t.Fatalf("unknown command without auto-allow: %q", text)
			}
		})
	}
}

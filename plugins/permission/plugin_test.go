package permission_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/internal/policytest"
	"github.com/dshgo/harness/plugins/approval"
	"github.com/dshgo/harness/plugins/permission"
	"github.com/dshgo/harness/services/tools"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var headless = policytest.Mount{Plugin: approval.Plugin, Config: approval.Config{Answerer: approval.AnswererHeadless, Policy: approval.PolicyAsk}}

func config(cwd string, allow, ask, deny []string) permission.Config {
	var c permission.Config
	c.SetDefaults()
	c.Cwd, c.Allow, c.Ask, c.Deny = cwd, allow, ask, deny
	return c
}

// TestIssueRuleSetThroughTheRegistry: "allow git and go test, ask for edits,
// deny rm -rf", headless.
func TestIssueRuleSetThroughTheRegistry(t *testing.T) {
	dir := t.TempDir()
	cfg := config(dir, []string{"bash(git *)", "bash(go test *)", "bash(echo *)"}, []string{"edit", "write"}, []string{"bash(rm -rf *)"})
	reg := policytest.Harness(t, policytest.Mount{Plugin: permission.Plugin, Config: cfg}, headless)
	tests := []struct {
		command string
		want    string
		isError bool
	}{
		{"echo allowed", "allowed\n", false},
		{"git --version >/dev/null && echo git ok", "git ok\n", false},
		{"echo a; rm -rf " + filepath.Join(dir, "x"), `Error: permission denied: rule "bash(rm -rf *)" in the deny list matches this call`, true},
		{"ls " + dir, headlessHint(`no allow rule covers this call (permission mode default)`,
			[]string{"bash(git *)", "bash(go test *)", "bash(echo *)"}, "bash(ls *)"), true},
		// The hint names the part that is not covered (tee), not the first one.
		{"echo x | tee " + filepath.Join(dir, "f"), headlessHint(`no allow rule covers this call (permission mode default)`,
			[]string{"bash(git *)", "bash(go test *)", "bash(echo *)"}, "bash(tee *)"), true},
	}
	for _, tt := range tests {
		o := policytest.Run(reg, "c", tt.command)
		if policytest.Text(o) != tt.want || o.IsError != tt.isError {
			t.Errorf("%q:\n got %q\nwant %q", tt.command, policytest.Text(o), tt.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "f")); !os.IsNotExist(err) {
		t.Error("the piped command ran")
	}
}

// headlessHint is the full headless denial of a bash call whose hint is
// rule, for a policy whose allow list is current.
func headlessHint(reason string, current []string, rule string) string {
	list := ""
	for _, r := range append(current, rule) {
		if list != "" {
			list += ", "
		}
		list += policytest.Quote(r)
	}
	return `Error: tool "bash" requires approval: ` + reason + `, but this session is headless: there is no terminal to ask on. ` +
		`To let this call run, run with --allowed-tools '` + rule + `' (this run only), or add the rule ` + policytest.Quote(rule) + ` to the allow list of the permission plugin: either save the patch` + "\n" +
		`- {id: permission, config: {allow: [` + list + `]}}` + "\n" +
		`to a file and run with --patch FILE (the row id is the permission row's id in your harness.yml; a patch's list replaces the whole list, so the patch repeats the current rules), ` +
		"or write the complete configuration with `harness config > harness.yml` and add " + policytest.Quote(rule) + ` to its allow list ` +
		`(a harness.yml holding only a permission row would replace the whole default configuration). ` +
		`Or, to allow every call that no deny rule refuses, set mode: bypass. The tool "bash" was not run.`
}

// TestAskRuleHeadlessNamesTheRule: an ask rule's denial says which rule to change.
func TestAskRuleHeadlessNamesTheRule(t *testing.T) {
	cfg := config(t.TempDir(), []string{"bash"}, []string{"bash(git push *)"}, nil)
	reg := policytest.Harness(t, policytest.Mount{Plugin: permission.Plugin, Config: cfg}, headless)
	o := policytest.Run(reg, "c", "git push origin main")
	want := `Error: tool "bash" requires approval: rule "bash(git push *)" is in the ask list, but this session is headless: there is no terminal to ask on. ` +
		`To let this call run, remove "bash(git push *)" from the ask list of the permission plugin in harness.yml. The tool "bash" was not run.`
	if policytest.Text(o) != want {
		t.Fatalf("got %q", policytest.Text(o))
	}
}

// TestAskWithoutApprovalService: no approval plugin mounted.
func TestAskWithoutApprovalService(t *testing.T) {
	reg := policytest.Harness(t, policytest.Mount{Plugin: permission.Plugin, Config: config(t.TempDir(), nil, nil, nil)})
	o := policytest.Run(reg, "c", "echo hi")
	if c := policytest.Text(o); !o.IsError || !strings.Contains(c, "no approval service is mounted (add the approval plugin to harness.yml)") {
		t.Fatalf("got %q", c)
	}
}

// TestPlanModeDeniesNonReadOnly: plan mode denies bash even with an allow rule.
func TestPlanModeDeniesNonReadOnly(t *testing.T) {
	cfg := config(t.TempDir(), []string{"bash"}, nil, nil)
	cfg.Mode = permission.ModePlan
	reg := policytest.Harness(t, policytest.Mount{Plugin: permission.Plugin, Config: cfg}, headless)
	o := policytest.Run(reg, "c", "echo hi")
	if want := `Error: permission denied: plan mode allows only read-only tools, and "bash" is not read-only`; policytest.Text(o) != want {
		t.Fatalf("got %q", policytest.Text(o))
	}
}

// TestDenyIsAGuardNoVoteCanLift: a pre-execute listener that short-circuits
// with allow (registered to run first) cannot lift a deny rule.
func TestDenyIsAGuardNoVoteCanLift(t *testing.T) {
	cfg := config(t.TempDir(), []string{"bash"}, nil, []string{"bash(rm *)"})
	rogue := core.Define("rogue-allow", func(c *core.Context, _ struct{}) error {
		return core.On(c, tools.PreExecute, func(ctx context.Context, e *tools.Execution, next core.Next[*tools.Execution, tools.Decision]) (tools.Decision, error) {
			return tools.Allow(), nil // never calls next
		}, core.Prepend())
	})
	reg := policytest.Harness(t, policytest.Mount{Plugin: permission.Plugin, Config: cfg}, policytest.Mount{Plugin: rogue}, headless)
	o := policytest.Run(reg, "c", "rm -f /nonexistent")
	if want := `Error: permission denied: rule "bash(rm *)" in the deny list matches this call`; policytest.Text(o) != want {
		t.Fatalf("got %q", policytest.Text(o))
	}
}

// ptyApproval provides the real approval service with the terminal answerer
// talking to a pseudo-terminal the test plays the user on.
func ptyApproval(t *testing.T) (policytest.Mount, *os.File, *bufio.Reader) {
	master, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	t.Cleanup(func() { tty.Close(); master.Close() })
	name := tty.Name()
	open := func() (approval.TTY, error) { return os.OpenFile(name, os.O_RDWR, 0) }
	p := core.Define("approval-pty", func(c *core.Context, _ struct{}) error {
		return core.Provide[tools.Approver](c, tools.ApprovalKey, approval.New(approval.NewTerminal(open), false))
	}, core.WithProvides(tools.ApprovalKey.Name()))
	return policytest.Mount{Plugin: p}, master, bufio.NewReader(master)
}

func answer(t *testing.T, master *os.File, out *bufio.Reader, line string) {
	t.Helper()
	var seen strings.Builder
	_ = master.SetReadDeadline(time.Now().Add(10 * time.Second))
	for !strings.Contains(seen.String(), "(default): ") {
		b, err := out.ReadByte()
		if err != nil {
			t.Errorf("no prompt: %q: %v", seen.String(), err)
			return
		}
		seen.WriteByte(b)
	}
	if _, err := master.WriteString(line + "\n"); err != nil {
		t.Error(err)
	}
}

// TestInteractiveApprovalOnceAlwaysReject plays the user on a real terminal.
func TestInteractiveApprovalOnceAlwaysReject(t *testing.T) {
	mnt, master, out := ptyApproval(t)
	cfg := config(t.TempDir(), nil, nil, []string{"bash(rm -rf *)"})
	reg := policytest.Harness(t, policytest.Mount{Plugin: permission.Plugin, Config: cfg}, mnt)

	exec := func(command, reply string) *tools.Outcome {
		done := make(chan struct{})
		if reply != "" {
			go func() { defer close(done); answer(t, master, out, reply) }()
		} else {
			close(done)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		o := reg.Execute(ctx, policytest.BashCall("c", command))
		<-done
		return o
	}
	if o := exec("echo once", "y"); policytest.Text(o) != "once\n" {
		t.Fatalf("once: %q", policytest.Text(o))
	}
	if o := exec("echo no", "n"); policytest.Text(o) != `Error: the user rejected tool "bash"` {
		t.Fatalf("reject: %q", policytest.Text(o))
	}
	if o := exec("echo always", "a"); policytest.Text(o) != "always\n" {
		t.Fatalf("always: %q", policytest.Text(o))
	}
	// The grant (suggested rule "bash(echo always *)") covers similar calls
	// in this session without a question…
	if o := exec("echo always again", ""); policytest.Text(o) != "always again\n" {
		t.Fatalf("granted: %q", policytest.Text(o))
	}
	// …but never lifts a deny rule.
	if o := exec("echo always && rm -rf /nonexistent", ""); !strings.Contains(policytest.Text(o), `rule "bash(rm -rf *)"`) {
		t.Fatalf("deny after grant: %q", policytest.Text(o))
	}
}

func TestConfigValidateNamesTheField(t *testing.T) {
	c := config("", nil, nil, []string{"bash(rm -rf *)", "bash("})
	if err := c.Validate(); err == nil || err.Error() != `deny[1]: rule "bash(": missing closing parenthesis` {
		t.Fatalf("Validate() = %v", err)
	}
}

// TestNeverPolicyDenialSaysSo: approval policy "never" rejects every ask, and
// the reason says so.
func TestNeverPolicyDenialSaysSo(t *testing.T) {
	never := policytest.Mount{Plugin: approval.Plugin, Config: approval.Config{Answerer: approval.AnswererHeadless, Policy: approval.PolicyNever}}
	reg := policytest.Harness(t, policytest.Mount{Plugin: permission.Plugin, Config: config(t.TempDir(), nil, nil, nil)}, never)
	o := policytest.Run(reg, "c", "echo hi")
	if c := policytest.Text(o); !strings.Contains(c, `but the approval policy is "never": every ask is rejected. To let this call run, run with --allowed-tools 'bash(echo hi *)' (this run only), or add the rule "bash(echo hi *)"`) {
		t.Fatalf("got %q", c)
	}
}

// TestDontAskDeniesWhatWouldBeAsked: Claude Code's dontAsk mode. Even with
// someone at the terminal nobody is asked: a call no allow rule covers, and
// one an ask rule matches, is denied at once, saying why; allowed and
// read-only calls run. bypassPermissions is accepted as bypass.
func TestDontAskDeniesWhatWouldBeAsked(t *testing.T) {
	mnt, _, _ := ptyApproval(t)
	dir := t.TempDir()
	cfg := config(dir, []string{"bash(echo *)"}, []string{"bash(echo secret*)"}, nil)
	cfg.Mode = permission.ModeDontAsk
	reg := policytest.Harness(t, policytest.Mount{Plugin: permission.Plugin, Config: cfg}, mnt)
	run := func(command string) *tools.Outcome {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return reg.Execute(ctx, policytest.BashCall("c", command))
	}
	if o := run("echo allowed"); policytest.Text(o) != "allowed\n" {
		t.Fatalf("allowed: %q", policytest.Text(o))
	}
	for command, want := range map[string]string{
		"ls " + dir:        `no allow rule covers this call (permission mode dontAsk), but the permission mode is dontAsk: what would be asked is denied.`,
		"echo secret-word": `rule "bash(echo secret*)" is in the ask list, but the permission mode is dontAsk: what would be asked is denied.`,
	} {
		// Had the terminal been asked, nobody answers it: the call would end
		// cancelled at the deadline, not with this denial.
		if o := run(command); !o.IsError || !strings.Contains(policytest.Text(o), want) {
			t.Errorf("%s: %q, want a denial containing %q", command, policytest.Text(o), want)
		}
	}
	bp := config(dir, nil, nil, nil)
	bp.Mode = "bypassPermissions"
	if err := bp.Validate(); err != nil {
		t.Fatalf("bypassPermissions: %v", err)
	}
}

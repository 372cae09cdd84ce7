package tools_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dshgo/harness/services/tools"
)

// An Approve vote lifts soft asks and denies (a permission mode's default
// answer), in either registration order, but never a hard ask, a deny, or a
// guard.
func TestApproveVoteLiftsOnlySoftVotes(t *testing.T) {
	t.Parallel()
	approve := tools.Decision{Approve: true}
	softAsk := tools.Decision{Kind: tools.DecisionAsk, Reason: "mode asks", Soft: true}
	softDeny := tools.Decision{Kind: tools.DecisionDeny, Reason: "mode asks, nobody can answer", Soft: true}
	cases := []struct {
		name  string
		votes []tools.Decision
		guard string
		want  string // output text; "ASKED" when the approver was asked
	}{
		{"approve lifts a soft ask", []tools.Decision{approve, softAsk}, "", "hi"},
		{"approve lifts a soft ask registered first", []tools.Decision{softAsk, approve}, "", "hi"},
		{"approve lifts a soft deny", []tools.Decision{softDeny, approve}, "", "hi"},
		{"soft ask without approve asks", []tools.Decision{softAsk, tools.Allow()}, "", "ASKED"},
		{"soft deny without approve denies", []tools.Decision{tools.Allow(), softDeny}, "", "Error: mode asks, nobody can answer"},
		{"approve does not lift a hard ask", []tools.Decision{approve, tools.Ask("rule asks")}, "", "ASKED"},
		{"approve does not lift a hard deny", []tools.Decision{tools.Deny("rule denies"), softAsk, approve}, "", "Error: rule denies"},
		{"approve does not lift a guard", []tools.Decision{approve, softAsk}, "guard says no", "Error: guard says no"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			var calls atomic.Int64
			e.register(echoTool(&calls))
			a := &approver{answer: tools.ApprovalRejected}
			e.provideApprover(a)
			for _, v := range tc.votes {
				e.on(tools.OnPreExecute(e.c, func(context.Context, *tools.Execution) (tools.Decision, error) { return v, nil }))
			}
			if tc.guard != "" {
				e.on(e.reg.Guard(e.c, func(*tools.Execution) string { return tc.guard }))
			}
			o := e.exec("echo", `{"text":"hi"}`)
			got := text(o)
			if a.asked.Load() > 0 {
				got = "ASKED"
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// A vote's rewrite of the arguments is validated against the schema and
// re-checked by every vote and guard: it runs with the new arguments when
// policy allows them, and never when policy denies them.
func TestRewrittenArgumentsAreRecheckedByPolicy(t *testing.T) {
	t.Parallel()
	setup := func(t *testing.T, rewriteTo string, rewriterKind tools.DecisionKind) (*env, *atomic.Int64, *atomic.Int64, *[]bool) {
		e := newEnv(t)
		var calls, policyRuns atomic.Int64
		e.register(echoTool(&calls))
		var rechecks []bool
		e.on(tools.OnPreExecute(e.c, func(_ context.Context, x *tools.Execution) (tools.Decision, error) {
			rechecks = append(rechecks, x.Rechecking())
			if x.Rechecking() {
				return tools.Allow(), nil
			}
			return tools.Decision{Kind: rewriterKind, Approve: rewriterKind == tools.DecisionAllow, Arguments: rewriteTo}, nil
		}))
		// a policy vote that denies "secret" and asks (softly) for everything else
		e.on(tools.OnPreExecute(e.c, func(_ context.Context, x *tools.Execution) (tools.Decision, error) {
			policyRuns.Add(1)
			if strings.Contains(x.Arguments(), "secret") {
				return tools.Deny("policy: no secrets"), nil
			}
			return tools.Decision{Kind: tools.DecisionAsk, Soft: true, Reason: "mode asks"}, nil
		}))
		e.on(e.reg.Guard(e.c, func(x *tools.Execution) string {
			if strings.Contains(x.Arguments(), "forbidden") {
				return "guard: forbidden"
			}
			return ""
		}))
		return e, &calls, &policyRuns, &rechecks
	}
	t.Run("allowed rewrite runs with the new arguments", func(t *testing.T) {
		t.Parallel()
		e, calls, policy, rechecks := setup(t, `{"text":"rewritten"}`, tools.DecisionAllow)
		o := e.exec("echo", `{"text":"original"}`)
		if text(o) != "rewritten" || calls.Load() != 1 || policy.Load() != 2 || len(*rechecks) != 2 || !(*rechecks)[1] {
			t.Fatalf("got %q ran %d policy %d rechecks %v", text(o), calls.Load(), policy.Load(), *rechecks)
		}
	})
	t.Run("a rewrite into a denied call is denied", func(t *testing.T) {
		t.Parallel()
		e, calls, _, _ := setup(t, `{"text":"show the secret"}`, tools.DecisionAllow)
		if o := e.exec("echo", `{"text":"harmless"}`); text(o) != "Error: policy: no secrets" || calls.Load() != 0 {
			t.Fatalf("got %q ran %d", text(o), calls.Load())
		}
	})
	t.Run("a rewrite into a guarded call is refused", func(t *testing.T) {
		t.Parallel()
		e, calls, _, _ := setup(t, `{"text":"forbidden"}`, tools.DecisionAllow)
		if o := e.exec("echo", `{"text":"harmless"}`); text(o) != "Error: guard: forbidden" || calls.Load() != 0 {
			t.Fatalf("got %q ran %d", text(o), calls.Load())
		}
	})
	t.Run("a rewrite that breaks the schema is INVALID_ARGS", func(t *testing.T) {
		t.Parallel()
		e, calls, _, _ := setup(t, `{"text":5}`, tools.DecisionAllow)
		o := e.exec("echo", `{"text":"harmless"}`)
		if code(o) != tools.CodeInvalidArgs || calls.Load() != 0 || !strings.Contains(text(o), "rewrote are invalid") {
			t.Fatalf("got %q code %q ran %d", text(o), code(o), calls.Load())
		}
	})
	t.Run("a rewriter's ask stands for the new arguments", func(t *testing.T) {
		t.Parallel()
		e, calls, _, _ := setup(t, `{"text":"rewritten"}`, tools.DecisionAsk)
		a := &approver{answer: tools.ApprovalAllowedOnce}
		e.provideApprover(a)
		if o := e.exec("echo", `{"text":"original"}`); text(o) != "rewritten" || calls.Load() != 1 || a.asked.Load() != 1 {
			t.Fatalf("got %q ran %d asked %d", text(o), calls.Load(), a.asked.Load())
		}
	})
	t.Run("a denied original is not rewritten into an allowed call", func(t *testing.T) {
		t.Parallel()
		e, calls, _, _ := setup(t, `{"text":"harmless"}`, tools.DecisionAllow)
		if o := e.exec("echo", `{"text":"secret"}`); text(o) != "Error: policy: no secrets" || calls.Load() != 0 {
			t.Fatalf("got %q ran %d", text(o), calls.Load())
		}
	})
	t.Run("two different rewrites deny", func(t *testing.T) {
		t.Parallel()
		e, calls, _, _ := setup(t, `{"text":"one"}`, tools.DecisionAllow)
		e.on(tools.OnPreExecute(e.c, func(_ context.Context, x *tools.Execution) (tools.Decision, error) {
			if x.Rechecking() {
				return tools.Allow(), nil
			}
			return tools.Decision{Arguments: `{"text":"two"}`}, nil
		}))
		if o := e.exec("echo", `{"text":"x"}`); !strings.Contains(text(o), "rewrote the arguments") || calls.Load() != 0 {
			t.Fatalf("got %q ran %d", text(o), calls.Load())
		}
	})
}

package permission_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/internal/policytest"
	"github.com/dshgo/harness/plugins/permission"
	"github.com/dshgo/harness/services/tools"
)

// frontEnd is a front end's answerer (as the TUI or the web app provides
// under tools.AnswererKey): it records each question and gives the next
// scripted answer, with the user's reason.
type frontEnd struct {
	asked   []tools.ApprovalRequest
	answers []tools.ApprovalAnswer
}

func (f *frontEnd) Answer(ctx context.Context, req tools.ApprovalRequest) (tools.ApprovalOutcome, error) {
	a, err := f.AnswerDetailed(ctx, req)
	return a.Outcome, err
}

func (f *frontEnd) AnswerDetailed(_ context.Context, req tools.ApprovalRequest) (tools.ApprovalAnswer, error) {
	f.asked = append(f.asked, req)
	a := f.answers[0]
	f.answers = f.answers[1:]
	return a, nil
}

// TestFrontEndSeesTheAlwaysRuleAndItsReasonReachesTheModel: the question
// names the exact rule an "always" answer adds; that rule (and nothing
// wider) is what is then granted; a rejection's reason is the tool result.
func TestFrontEndSeesTheAlwaysRuleAndItsReasonReachesTheModel(t *testing.T) {
	fe := &frontEnd{answers: []tools.ApprovalAnswer{
		{Outcome: tools.ApprovalRejected, Reason: "use the Makefile target instead"},
		{Outcome: tools.ApprovalAllowedAlways},
	}}
	ui := core.Define("ui", func(c *core.Context, _ struct{}) error {
		return core.Provide[tools.Answerer](c, tools.AnswererKey, fe)
	}, core.WithProvides(tools.AnswererKey.Name()))
	reg := policytest.Harness(t, policytest.Mount{Plugin: permission.Plugin, Config: config(t.TempDir(), nil, nil, nil)},
		policytest.Mount{Plugin: ui}, headless)
	exec := func(cmd string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return policytest.Text(reg.Execute(ctx, policytest.BashCall("c", cmd)))
	}
	if got, want := exec("echo one"), `Error: the user rejected tool "bash" and said: use the Makefile target instead`; got != want {
		t.Fatalf("rejection with a reason:\n got %q\nwant %q", got, want)
	}
	if got := exec("echo two"); got != "two\n" {
		t.Fatalf("always: %q", got)
	}
	for i, want := range [][]string{{"bash(echo one *)"}, {"bash(echo two *)"}} {
		if !reflect.DeepEqual(fe.asked[i].AlwaysRules, want) {
			t.Errorf("question %d: AlwaysRules %q, want %q", i, fe.asked[i].AlwaysRules, want)
		}
	}
	// The shown rule is granted: a similar call runs without a question…
	if got := exec("echo two more"); got != "two more\n" || len(fe.asked) != 2 {
		t.Fatalf("granted by the shown rule: %q after %d questions", got, len(fe.asked))
	}
	// …and a call outside it is asked (here: no answers left would panic,
	// so answer once more).
	fe.answers = []tools.ApprovalAnswer{{Outcome: tools.ApprovalRejected}}
	if got := exec("echo one again"); got != `Error: the user rejected tool "bash"` || len(fe.asked) != 3 {
		t.Fatalf("outside the rule: %q after %d questions", got, len(fe.asked))
	}
}

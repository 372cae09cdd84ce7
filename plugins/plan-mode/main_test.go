package planmode

import (
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/dshgo/harness/services/tools"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// The presentation shows the plan from the call alone (pending: titled by
// its first line, the plan as its text), then whether it was approved or
// awaits approval (the turn concluded on it).
func TestPresentShowsThePlan(t *testing.T) {
	in := tools.PresentInput[Args, string]{ID: "c1", Args: Args{Plan: "# Fix the parser\n\n1. Read parse.go.\n"}}
	p := Present(in)
	if p.Title != "Plan: Fix the parser" || p.Kind != tools.KindThink || len(p.Content) != 1 || !strings.Contains(p.Content[0].Content.Text, "1. Read parse.go.") {
		t.Fatalf("pending presentation: %+v", p)
	}
	in.Outcome = &tools.Outcome{ConcludesTurn: true}
	if s := Present(in).Meta; s == nil || s.Summary != "awaiting approval" {
		t.Errorf("a plan no one could approve: %+v", s)
	}
	in.Outcome = &tools.Outcome{}
	if s := Present(in).Meta; s == nil || s.Summary != "approved" {
		t.Errorf("an approved plan: %+v", s)
	}
}

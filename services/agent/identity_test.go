package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// Issue 36 item 6: the system prompt's first line names the harness and
// the session's model route, not a vendor.
func TestIdentityLineNamesModelRoute(t *testing.T) {
	f := newFixture(t, []llmtest.Turn{llmtest.Reply("ok")})
	ss := f.open(agent.Options{Model: "test"})
	if got := ss.ModelRoute(); got != "test/m1" {
		t.Fatalf("ModelRoute() = %q, want test/m1", got)
	}
	if _, err := ss.Run(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
	sys := f.wire(0).Messages[0]
	first, _, _ := strings.Cut(sys.Text(), "\n")
	if want := "You are an AI agent running in harness, using the model test/m1."; sys.Role != "system" || first != want {
		t.Fatalf("system prompt opens with %q (role %s), want %q", first, sys.Role, want)
	}
	if strings.Contains(sys.Text(), "DeepSeek") {
		t.Fatalf("system prompt names a vendor:\n%s", sys.Text())
	}
}

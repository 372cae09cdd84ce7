package wordcount_test

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"

	_ "example.com/wordcount/wordcount" // registers tool-word-count
	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/services/tools"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Unit-test a tool through the registry of a harness booted from a
// manifest: the call goes through the same pipeline a model's does
// (argument validation, policy, timeouts).
func TestWordCountThroughTheRegistry(t *testing.T) {
	h := harnesstest.Start(t, "plugins:\n  - {id: tools, name: tools}\n  - {id: word-count, name: tool-word-count}\n")
	reg := harnesstest.Service(t, h, tools.Key)

	out := reg.Execute(context.Background(), tools.Call{Name: "word_count", Arguments: `{"text":"one two  three"}`})
	if out.IsError || tools.TextOf(out.Content) != "3" {
		t.Fatalf("got %q (error %v), want 3", tools.TextOf(out.Content), out.IsError)
	}
	// Arguments that do not match the schema never reach the body.
	out = reg.Execute(context.Background(), tools.Call{Name: "word_count", Arguments: `{"text":3}`})
	if !out.IsError || !strings.Contains(out.ErrorMessage, "invalid arguments") {
		t.Fatalf("got %q, want an invalid arguments error", tools.TextOf(out.Content))
	}
}

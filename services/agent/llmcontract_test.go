package agent_test

import (
	"context"
	"testing"
	"time"

	llmopenai "github.com/dshgo/harness/plugins/llm-openai"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// Issue 20 item 5: a route naming an alias (deepseek/deepseek-chat, thinking
// disabled) sends the canonical model with the alias's thinking mode, also
// after the session is resumed.
func TestAliasCarriesItsThinkingMode(t *testing.T) {
	t.Parallel()
	f := newFixture(t, []llmtest.Turn{llmtest.Reply("one"), llmtest.Reply("two")})
	fb := f.rc.Plugin(llmopenai.Plugin, llmopenai.Config{
		Provider: "ds", BaseURL: f.srv.URL, APIKey: "sk-test",
		Models: []llmopenai.ModelConfig{{Name: "flash", Default: true, Thinking: llm.ThinkingEnabled,
			Aliases: []llm.Alias{{Name: "chat", Thinking: llm.ThinkingDisabled}}}},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := fb.Await(ctx); err != nil {
		t.Fatal(err)
	}
	ss, err := f.svc.Open(ctx, agent.Options{Model: "ds/chat"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ss.Run(ctx, "hi"); err != nil {
		t.Fatal(err)
	}
	id := ss.ID()
	if err := ss.Close(ctx); err != nil {
		t.Fatal(err)
	}
	resumed := f.open(agent.Options{ID: id})
	if _, err := resumed.Run(ctx, "again"); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		w := f.wire(i)
		if w.Model != "flash" || w.Thinking == nil || w.Thinking.Type != "disabled" {
			t.Fatalf("request %d: model %q thinking %+v, want flash with thinking disabled", i, w.Model, w.Thinking)
		}
	}
}

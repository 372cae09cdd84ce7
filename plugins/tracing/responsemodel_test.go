package tracing_test

import (
	"testing"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// A model call's span records gen_ai.response.model as the provider named
// it in the stream (here not the requested model), and none when the
// provider named none: it is never copied from the request. The same for
// gen_ai.response.id, the provider's id of the response.
func TestChatSpanRecordsTheResponseModel(t *testing.T) {
	h := setup(t, []llmtest.Turn{
		llmtest.Stream(llmtest.ToolCallStart(0, "c1", "echo", `{"text":"x"}`),
			llmtest.FinishWithUsage("tool_calls", llmtest.Usage{PromptTokens: 10, CompletionTokens: 2, TotalTokens: 12})).WithModel("m1-2026-12-01").WithID("chatcmpl-step1"),
		llmtest.Reply("done").WithModel("").WithID(""),
	}, nil)
	if res, _, err := h.run(t, "go"); err != nil || res.Steps != 2 {
		t.Fatalf("run: %+v %v", res, err)
	}
	chats := h.spans()["chat m1"]
	if len(chats) != 2 {
		t.Fatalf("spans: %v", names(h.rec.Ended()))
	}
	want(t, chats[0], map[string]any{"gen_ai.request.model": "m1", "gen_ai.response.model": "m1-2026-12-01", "gen_ai.response.id": "chatcmpl-step1"})
	want(t, chats[1], map[string]any{"gen_ai.request.model": "m1", "harness.usage.estimated": true})
	if v, ok := attrs(chats[1])["gen_ai.response.model"]; ok {
		t.Errorf("a reply naming no model has gen_ai.response.model %s", v.String())
	}
	if v, ok := attrs(chats[1])["gen_ai.response.id"]; ok {
		t.Errorf("a reply without an id has gen_ai.response.id %s", v.String())
	}
	for _, s := range h.spans()["invoke_agent harness"] {
		if _, ok := attrs(s)["gen_ai.response.model"]; ok {
			t.Errorf("invoke_agent has gen_ai.response.model: %v", s.Attributes())
		}
	}
}

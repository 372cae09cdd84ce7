package llmopenai

import (
	"testing"

	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// The finish chunk carries the model the response named (the last
// non-empty `model` of the chunks), not the requested one; a stream that
// names none, or a failed one that named none, leaves it empty; a
// non-streamed completion's `model` is carried the same way.
func TestFinishCarriesTheModelTheResponseNamed(t *testing.T) {
	renamed := llmtest.Stream(llmtest.TextDelta("a"), llmtest.TextDelta("b"), llmtest.Finish("stop")).WithModel("deepseek-v4-flash-20261201")
	renamed.Events[1] = llmtest.Raw(`{"choices":[{"index":0,"delta":{"content":"b"}}]}`) // a chunk without model keeps the last one
	srv := llmtest.New(t, []llmtest.Turn{
		llmtest.Reply("hi"),
		renamed,
		llmtest.Reply("hi").WithModel(""),
		llmtest.Error(400, "bad request"),
	})
	a := newAdapter(t, testConfig(srv.URL))
	for i, want := range []string{"llmtest", "deepseek-v4-flash-20261201", "", ""} {
		chunks, r := collect(t, a.Stream(t.Context(), userRequest("q")))
		if got := chunks[len(chunks)-1].Model; got != want || r.Model != want {
			t.Errorf("response %d: finish chunk model %q, response model %q, want %q", i, got, r.Model, want)
		}
	}
	whole := httptestJSON(t, `{"id":"x","object":"chat.completion","model":"deepseek-v4-pro-0301","choices":[{"index":0,`+
		`"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
	if _, r := collect(t, newAdapter(t, testConfig(whole)).Stream(t.Context(), userRequest("q"))); r.Model != "deepseek-v4-pro-0301" || r.Finish != llm.FinishStop {
		t.Errorf("non-streamed: model %q finish %q", r.Model, r.Finish)
	}
}

// The finish chunk and the response carry the response's id (the last
// non-empty `id` of the chunks; "" when none named one), streamed or not.
func TestFinishCarriesTheResponseID(t *testing.T) {
	srv := llmtest.New(t, []llmtest.Turn{
		llmtest.Reply("hi"),
		llmtest.Reply("hi").WithID("chatcmpl-42"),
		llmtest.Reply("hi").WithID(""),
	})
	a := newAdapter(t, testConfig(srv.URL))
	for i, want := range []string{"chatcmpl-llmtest", "chatcmpl-42", ""} {
		chunks, r := collect(t, a.Stream(t.Context(), userRequest("q")))
		if got := chunks[len(chunks)-1].ResponseID; got != want || r.ID != want {
			t.Errorf("response %d: finish chunk id %q, response id %q, want %q", i, got, r.ID, want)
		}
	}
	whole := httptestJSON(t, `{"id":"chatcmpl-whole","object":"chat.completion","model":"m","choices":[{"index":0,`+
		`"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
	if _, r := collect(t, newAdapter(t, testConfig(whole)).Stream(t.Context(), userRequest("q"))); r.ID != "chatcmpl-whole" {
		t.Errorf("non-streamed: id %q", r.ID)
	}
}

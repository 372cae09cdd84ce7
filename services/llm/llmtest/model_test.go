package llmtest_test

import (
	"strings"
	"testing"

	"github.com/dshgo/harness/services/llm/llmtest"
)

// The chunks name the model "llmtest" whatever the request asked for;
// WithModel names another in every JSON chunk, or removes the field, and
// leaves events that are not JSON as they are.
func TestChunksNameTheModelThatAnswered(t *testing.T) {
	reply := llmtest.Reply("hi").WithUsage(llmtest.Usage{PromptTokens: 1, CompletionTokens: 1, TotalTokens: 2})
	reply.Events = append(reply.Events, llmtest.KeepAlive())
	srv := llmtest.New(t, []llmtest.Turn{reply, reply.WithModel("m1-2026-12-01"), reply.WithModel("")})
	req := `{"model":"m1","messages":[{"role":"user","content":"q"}],"stream":true}`
	for _, tc := range []struct{ want, not string }{
		{`"model":"llmtest"`, `m1-2026`},
		{`"model":"m1-2026-12-01"`, `"model":"llmtest"`},
		{``, `"model"`},
	} {
		_, body := post(t, srv.URL, req)
		var chunks int
		for _, line := range strings.Split(body, "\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok || data == "[DONE]" {
				continue
			}
			chunks++
			if !strings.Contains(data, tc.want) || strings.Contains(data, tc.not) {
				t.Errorf("chunk %s: want %q and not %q", data, tc.want, tc.not)
			}
		}
		if chunks != 3 || !strings.Contains(body, ": keep-alive\n\n") {
			t.Errorf("%d chunks, body %q", chunks, body)
		}
	}
}

// The chunks carry the id "chatcmpl-llmtest"; WithID sets another in every
// JSON chunk, or removes the field.
func TestWithIDSetsTheResponseID(t *testing.T) {
	reply := llmtest.Reply("hi")
	srv := llmtest.New(t, []llmtest.Turn{reply, reply.WithID("chatcmpl-42"), reply.WithID("")})
	req := `{"model":"m1","messages":[{"role":"user","content":"q"}],"stream":true}`
	for _, tc := range []struct{ want, not string }{
		{`"id":"chatcmpl-llmtest"`, `chatcmpl-42`},
		{`"id":"chatcmpl-42"`, `chatcmpl-llmtest`},
		{``, `"id"`},
	} {
		_, body := post(t, srv.URL, req)
		for _, line := range strings.Split(body, "\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok || data == "[DONE]" {
				continue
			}
			if !strings.Contains(data, tc.want) || strings.Contains(data, tc.not) {
				t.Errorf("chunk %s: want %q and not %q", data, tc.want, tc.not)
			}
		}
	}
}

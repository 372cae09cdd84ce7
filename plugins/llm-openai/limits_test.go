package llmopenai

import (
	"strings"
	"testing"

	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// endless streams text deltas until the client goes away.
func endless(yield func(string) bool) {
	ev := llmtest.TextDelta(strings.Repeat("x", 1024))
	for yield(ev) {
	}
}

// An endpoint that streams without end is cut at maxResponseBytes with a
// PROTOCOL error naming the field; what was received stays bounded.
func TestEndlessStreamEndsAtMaxResponseBytes(t *testing.T) {
	srv := llmtest.New(t, []llmtest.Turn{{Generate: endless}})
	cfg := testConfig(srv.URL)
	cfg.MaxResponseBytes = 1 << 20
	_, r := collect(t, newAdapter(t, cfg).Stream(t.Context(), userRequest("q")))
	if r.Finish != llm.FinishError || r.Err == nil || r.Err.Code != llm.CodeProtocol ||
		!strings.Contains(r.Err.Message, "went past 1048576 bytes") || !strings.Contains(r.Err.Message, "maxResponseBytes") {
		t.Fatalf("finish=%q err=%v", r.Finish, r.Err)
	}
	if n := len(r.Message.Content); n == 0 || n > 1<<20 {
		t.Fatalf("kept %d bytes of text, want some and at most the limit", n)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("requests = %d: a response that is too large is not retried", n)
	}
}

// The limit counts the body: a reply under it passes, the same reply over a
// smaller limit fails (streamed and non-streamed alike).
func TestMaxResponseBytesBoundary(t *testing.T) {
	reply := llmtest.Reply(strings.Repeat("y", 4000))
	for _, tt := range []struct {
		limit int64
		ok    bool
	}{{1 << 20, true}, {2000, false}} {
		srv := llmtest.New(t, []llmtest.Turn{reply})
		cfg := testConfig(srv.URL)
		cfg.MaxResponseBytes = tt.limit
		_, r := collect(t, newAdapter(t, cfg).Stream(t.Context(), userRequest("q")))
		if got := r.Err == nil; got != tt.ok {
			t.Fatalf("limit %d: err=%v", tt.limit, r.Err)
		}
	}
	whole := httptestJSON(t, `{"choices":[{"index":0,"message":{"role":"assistant","content":"`+strings.Repeat("z", 5000)+`"},"finish_reason":"stop"}]}`)
	cfg := testConfig(whole)
	cfg.MaxResponseBytes = 1000
	_, r := collect(t, newAdapter(t, cfg).Stream(t.Context(), userRequest("q")))
	if r.Err == nil || r.Err.Code != llm.CodeProtocol || !strings.Contains(r.Err.Message, "maxResponseBytes") {
		t.Fatalf("non-streamed: err=%v", r.Err)
	}
	if err := (Config{Provider: "p", BaseURL: "http://x", Models: []ModelConfig{{Name: "m"}}, MaxResponseBytes: -1}).Validate(); err == nil || !strings.Contains(err.Error(), "maxResponseBytes") {
		t.Fatalf("negative maxResponseBytes: %v", err)
	}
	if got := (Config{}).maxResponseBytes(); got != DefaultMaxResponseBytes {
		t.Fatalf("default = %d", got)
	}
}

package llmopenai

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/llm/llmtest"
)

// Issue 20 item 6: DeepSeek sends `: keep-alive` comments while a request is
// queued; they are bytes from a live endpoint and restart the idle timer.
func TestKeepAliveCommentsResetTheIdleTimeout(t *testing.T) {
	ka := llmtest.KeepAlive()
	srv := llmtest.New(t, []llmtest.Turn{{
		Events: []string{ka, ka, ka, ka, ka, llmtest.TextDelta("late"), llmtest.Finish("stop")},
		Delay:  150 * time.Millisecond,
	}})
	cfg := testConfig(srv.URL)
	cfg.Timeout = Duration(400 * time.Millisecond) // shorter than the 750ms of keep-alives before the text
	zero := 0
	cfg.MaxRetries = &zero
	_, r := collect(t, newAdapter(t, cfg).Stream(t.Context(), userRequest("q")))
	if r.Err != nil || r.Message.Content != "late" {
		t.Fatalf("finish=%q err=%v content=%q", r.Finish, r.Err, r.Message.Content)
	}
}

// Issue 20 item 7: HTTP 200, only keep-alives, then the end of the stream:
// nothing was output, so it is retried like a reset before output.
func TestKeepAlivesThenEOFIsRetried(t *testing.T) {
	ka := llmtest.KeepAlive()
	srv := llmtest.New(t, []llmtest.Turn{
		{Events: []string{ka, ka}, OmitDone: true},
		llmtest.Stream(llmtest.TextDelta("fine"), llmtest.Finish("stop")),
	})
	_, r := collect(t, newAdapter(t, testConfig(srv.URL)).Stream(t.Context(), userRequest("q")))
	if r.Err != nil || r.Message.Content != "fine" || len(srv.Requests()) != 2 {
		t.Fatalf("err=%v content=%q requests=%d", r.Err, r.Message.Content, len(srv.Requests()))
	}
	// With no retry left, the error says what happened and stays retryable.
	srv = llmtest.New(t, []llmtest.Turn{{Events: []string{ka}, OmitDone: true}})
	zero := 0
	cfg := testConfig(srv.URL)
	cfg.MaxRetries = &zero
	_, r = collect(t, newAdapter(t, cfg).Stream(t.Context(), userRequest("q")))
	if r.Err == nil || r.Err.Code != llm.CodeNetwork || !strings.Contains(r.Err.Message, "ended before any output") {
		t.Fatalf("err=%v", r.Err)
	}
}

// Issue 20 item 8: 402 and 429 insufficient_quota are BILLING, final, with
// a message that sends the user to billing (not "rejected the API key").
func TestBillingErrorsAreFinal(t *testing.T) {
	ok := llmtest.Stream(llmtest.TextDelta("fine"), llmtest.Finish("stop"))
	quota := llmtest.Turn{Status: http.StatusTooManyRequests,
		ErrorBody: `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`}
	for name, turn := range map[string]llmtest.Turn{
		"402 Insufficient Balance": llmtest.Error(http.StatusPaymentRequired, "Insufficient Balance"),
		"429 insufficient_quota":   quota,
	} {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.New(t, []llmtest.Turn{turn, ok})
			_, r := collect(t, newAdapter(t, testConfig(srv.URL)).Stream(t.Context(), userRequest("q")))
			if r.Err == nil || r.Err.Code != llm.CodeBilling || r.Err.Retryable() ||
				!strings.Contains(r.Err.Message, "billing") || strings.Contains(r.Err.Message, "API key") {
				t.Fatalf("err=%v", r.Err)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Fatalf("requests = %d: a billing error is final", n)
			}
		})
	}
	// A plain rate limit is still retried.
	srv := llmtest.New(t, []llmtest.Turn{llmtest.Error(http.StatusTooManyRequests, "Rate limit reached"), ok})
	if _, r := collect(t, newAdapter(t, testConfig(srv.URL)).Stream(t.Context(), userRequest("q"))); r.Err != nil {
		t.Fatalf("rate limit: %v", r.Err)
	}
}

// Issue 20 item 9: an error event mid-stream reads `CODE: message`, not
// the raw JSON of the event.
func TestMidStreamErrorIsCodeAndMessage(t *testing.T) {
	for _, tt := range []struct{ event, want string }{
		{`{"error":{"message":"Internal server error, please retry","type":"server_error","code":"internal_error"}}`, "SERVER: Internal server error, please retry [internal_error]"},
		{`{"error":{"message":"overloaded","type":"server_error","code":null}}`, "SERVER: overloaded [server_error]"},
		{`{"error":"upstream closed"}`, "SERVER: upstream closed"},
	} {
		srv := llmtest.New(t, []llmtest.Turn{llmtest.Stream(llmtest.TextDelta("part"), tt.event)})
		_, r := collect(t, newAdapter(t, testConfig(srv.URL)).Stream(t.Context(), userRequest("q")))
		if r.Err == nil || r.Err.Error() != tt.want {
			t.Fatalf("error = %v, want %s", r.Err, tt.want)
		}
	}
}

// A 200 text/event-stream response whose body is not SSE (a proxy's error
// page, or a base URL that serves a web page) is a PROTOCOL error quoting
// the start of the body, not retried; a body of SSE comments and fields
// only stays the retryable "ended before any output".
func TestNonSSEBodyIsShown(t *testing.T) {
	page := llmtest.Bytes("<html><head><title>502 Bad Gateway</title></head>\n<body>nginx</body></html>\n")
	srv := llmtest.New(t, []llmtest.Turn{{Events: []string{page}, OmitDone: true}, {Events: []string{page}, OmitDone: true}})
	one := 1
	cfg := testConfig(srv.URL)
	cfg.MaxRetries = &one
	_, r := collect(t, newAdapter(t, cfg).Stream(t.Context(), userRequest("q")))
	if r.Err == nil || r.Err.Code != llm.CodeProtocol ||
		r.Err.Message != `the response is not an SSE stream (HTTP 200, Content-Type "text/event-stream"): "<html><head><title>502 Bad Gateway</title></head>\n<body>nginx</body></html>\n"` {
		t.Fatalf("err=%v", r.Err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1 (not retried)", n)
	}
	for name, body := range map[string]string{
		"comments and fields": ": ping\nevent: ping\nid: 7\nretry: 100\n\n",
		"empty":               "",
	} {
		srv := llmtest.New(t, []llmtest.Turn{{Events: []string{llmtest.Bytes(body)}, OmitDone: true}})
		zero := 0
		cfg := testConfig(srv.URL)
		cfg.MaxRetries = &zero
		if _, r := collect(t, newAdapter(t, cfg).Stream(t.Context(), userRequest("q"))); r.Err == nil || r.Err.Code != llm.CodeNetwork {
			t.Errorf("%s: err=%v", name, r.Err)
		}
	}
}

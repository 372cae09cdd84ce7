package llmopenai

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/llm"
)

// Error replies in the shapes servers send: OpenAI's object (a numeric
// code too), a bare string, a top-level message, and a non-JSON page; the
// body read is bounded, so a huge page neither hangs nor fills memory.
func TestErrorRepliesInTheShapesServersSend(t *testing.T) {
	huge := "<html>" + strings.Repeat("x", 8<<20) + "</html>"
	for _, tt := range []struct {
		name, body string
		status     int
		code       llm.Code
		msg        string
	}{
		{"object with a numeric code", `{"error":{"message":"bad tool schema","code":400,"type":"invalid_request_error"}}`, 400, llm.CodeProtocol, "bad tool schema"},
		{"bare string", `{"error":"Insufficient Balance"}`, 402, llm.CodeBilling, "Insufficient Balance"},
		{"top-level message", `{"message":"model not found"}`, 404, llm.CodeProtocol, "model not found"},
		{"an HTML page", "<html>Bad Gateway</html>", 502, llm.CodeServer, "Bad Gateway"},
		{"a huge page", huge, 500, llm.CodeServer, "Internal Server Error"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			cfg := testConfig(srv.URL)
			zero := 0
			cfg.MaxRetries = &zero
			_, r := collect(t, newAdapter(t, cfg).Stream(t.Context(), userRequest("q")))
			if r.Err == nil || r.Err.Code != tt.code || r.Err.Status != tt.status || !strings.Contains(r.Err.Message, tt.msg) || len(r.Err.Message) > 4096 {
				t.Fatalf("err = %#v, want %s, status %d, containing %q", r.Err, tt.code, tt.status, tt.msg)
			}
		})
	}
}

// The stream reader follows the event-stream format: comments and unknown
// fields are skipped, "data:" with or without the space, several data
// lines joined by newlines, CRLF line ends, and an event the body cut off
// before its blank line is dropped.
func TestSSEDecoderReadsTheEventStreamFormat(t *testing.T) {
	body := ": keep-alive\r\nid: 7\r\nretry: 100\r\nevent: chunk\r\ndata: {\"a\":\r\ndata:1}\r\n\r\n" +
		"data: second\n\n\n\ndata: cut off"
	d := newSSEDecoder(strings.NewReader(body))
	var got []string
	for d.next() {
		ev := d.event()
		got = append(got, ev.Type+"="+string(ev.Data))
	}
	if d.err != nil {
		t.Fatal(d.err)
	}
	if want := "chunk={\"a\":\n1}\n|=second\n"; strings.Join(got, "|") != want {
		t.Fatalf("events %q, want %q", strings.Join(got, "|"), want)
	}
}

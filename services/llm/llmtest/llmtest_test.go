package llmtest_test

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dshgo/harness/services/llm/llmtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func post(t *testing.T, url, body string) (*http.Response, string) {
	t.Helper()
	res, err := http.Post(url+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func TestServerStreamsScriptAndRecordsRequests(t *testing.T) {
	srv := llmtest.New(t, []llmtest.Turn{
		llmtest.Stream(llmtest.TextDelta("hi"), llmtest.Finish("stop")),
		llmtest.Error(429, "slow down").RetryAfter("2"),
	})
	res, body := post(t, srv.URL, `{"model":"m","messages":[{"role":"user","content":"q"}],"stream":true}`)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		if l := sc.Text(); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) != 3 || lines[0] != "data: "+llmtest.TextDelta("hi") || lines[2] != "data: [DONE]" {
		t.Fatalf("events = %q", lines)
	}
	res, body = post(t, srv.URL, `{"model":"m","messages":[]}`)
	if res.StatusCode != 429 || res.Header.Get("Retry-After") != "2" || !strings.Contains(body, `"message":"slow down"`) {
		t.Fatalf("status %d retry-after %q body %s", res.StatusCode, res.Header.Get("Retry-After"), body)
	}
	res, body = post(t, srv.URL, `{"model":"m","messages":[]}`)
	if res.StatusCode != 500 || !strings.Contains(body, "no scripted turn left for request 3") {
		t.Fatalf("exhausted script: status %d body %s", res.StatusCode, body)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || reqs[0].Path != "/v1/chat/completions" || srv.Remaining() != 0 {
		t.Fatalf("requests = %d remaining %d", len(reqs), srv.Remaining())
	}
	w, err := reqs[0].Wire()
	if err != nil || w.Model != "m" || !w.Stream || len(w.Messages) != 1 || w.Messages[0].Text() != "q" {
		t.Fatalf("wire = %+v err %v", w, err)
	}
}

func TestServerDropCutsTheConnection(t *testing.T) {
	srv := llmtest.New(t, []llmtest.Turn{{Events: []string{llmtest.TextDelta("par")}, Drop: true}, {Drop: true}})
	res, err := http.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != io.ErrUnexpectedEOF || !strings.Contains(string(b), "par") {
		t.Fatalf("body %q err %v, want the partial event then an unexpected EOF", b, err)
	}
	if _, err := http.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(`{}`)); err == nil {
		t.Fatal("drop before output: want a transport error")
	}
}

func TestDeepSeekReasoningCheck(t *testing.T) {
	srv := llmtest.New(t, []llmtest.Turn{llmtest.Stream(llmtest.Finish("stop"))}, llmtest.WithCheck(llmtest.DeepSeekReasoningCheck))
	res, body := post(t, srv.URL, `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`)
	if res.StatusCode != 400 || !strings.Contains(body, "Missing `reasoning_content` field in the assistant message at message index 1") {
		t.Fatalf("status %d body %s", res.StatusCode, body)
	}
	res, _ = post(t, srv.URL, `{"messages":[{"role":"assistant","content":null,"reasoning_content":"r","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`)
	if res.StatusCode != 200 || srv.Remaining() != 0 {
		t.Fatalf("with reasoning_content: status %d", res.StatusCode)
	}
}

func TestServerDelayPacesEventsAndStopsWhenTheClientLeaves(t *testing.T) {
	turn := llmtest.Reply("a reply long enough for several fragments")
	turn.Delay = 20 * time.Millisecond
	srv := llmtest.New(t, []llmtest.Turn{turn})
	start := time.Now()
	res, body := post(t, srv.URL, `{}`)
	if res.StatusCode != 200 || !strings.Contains(body, "[DONE]") {
		t.Fatalf("status %d body %s", res.StatusCode, body)
	}
	if el := time.Since(start); el < 60*time.Millisecond {
		t.Fatalf("elapsed %v: events were not paced", el)
	}
}

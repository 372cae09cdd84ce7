package acp

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// runGuard feeds input to guard and returns what it passed on and what it
// answered.
func runGuard(t *testing.T, input string) (passed, answered string) {
	t.Helper()
	pr, pw := io.Pipe()
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		guard(strings.NewReader(input), pw, &lockedWriter{w: &out})
	}()
	b, err := io.ReadAll(pr)
	if err != nil && err != io.EOF {
		t.Fatal(err)
	}
	<-done
	return string(b), out.String()
}

// Lines that are not JSON-RPC 2.0 messages are answered by the guard with
// the JSON-RPC error that fits, with the message's id when it has a usable
// one; messages pass on unchanged; blank lines are skipped.
func TestGuardAnswersMalformedMessages(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":9,"method":"x","params":"` + strings.Repeat("a", MaxMessageBytes) + `"}`
	input := strings.Join([]string{
		`not json`,
		`[{"jsonrpc":"2.0","id":1,"method":"initialize"}]`,
		`{"id":2,"method":"initialize"}`,
		`{"jsonrpc":"2.0","id":3,"method":7}`,
		`{"jsonrpc":"2.0","id":{"x":1},"method":"initialize"}`,
		`{"jsonrpc":"2.0","id":4}`,
		``,
		`  {"jsonrpc":"2.0","id":5,"method":"initialize","params":{}}  `,
		big,
		`{"jsonrpc":"2.0","id":"r1","result":{}}`,
		`"a string"`,
	}, "\n") + "\n"
	passed, answered := runGuard(t, input)
	wantPassed := `{"jsonrpc":"2.0","id":5,"method":"initialize","params":{}}
{"jsonrpc":"2.0","id":"r1","result":{}}
`
	if passed != wantPassed {
		t.Errorf("passed on:\n%s\nwant:\n%s", passed, wantPassed)
	}
	wantAnswered := `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: the message is not valid JSON"}}
{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: a message is one JSON object (batches are not supported)"}}
{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"Invalid Request: \"jsonrpc\" must be \"2.0\""}}
{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"Invalid Request: \"method\" must be a non-empty string"}}
{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: \"id\" must be a string, a number or null"}}
{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"Invalid Request: a message needs \"method\" (a request or notification) or \"result\" or \"error\" (a response)"}}
{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: message over 8388608 bytes"}}
{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: a message is one JSON object (batches are not supported)"}}
`
	if answered != wantAnswered {
		t.Errorf("answered:\n%s\nwant:\n%s", answered, wantAnswered)
	}
}

// Whatever a line holds, the guard passes it on as one JSON object with
// "jsonrpc": "2.0", or answers it with exactly one JSON-RPC error line;
// it never panics.
func FuzzGuard(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"initialize"}`, `{`, `[]`, `null`, `{"jsonrpc":"2.0","id":true,"method":"m"}`, "\x00\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		s = strings.ReplaceAll(s, "\n", " ")
		passed, answered := runGuard(t, s+"\n")
		if (passed == "") == (answered == "") && strings.TrimSpace(s) != "" {
			t.Fatalf("%q: passed %q, answered %q: want exactly one", s, passed, answered)
		}
		if passed != "" {
			var env envelope
			if err := json.Unmarshal([]byte(passed), &env); err != nil || env.JSONRPC != "2.0" {
				t.Fatalf("%q passed on as %q", s, passed)
			}
		}
		if answered != "" {
			var resp struct {
				JSONRPC string `json:"jsonrpc"`
				Error   struct{ Code int }
			}
			if err := json.Unmarshal([]byte(answered), &resp); err != nil || resp.JSONRPC != "2.0" || resp.Error.Code == 0 || strings.Count(answered, "\n") != 1 {
				t.Fatalf("%q answered %q", s, answered)
			}
		}
	})
}

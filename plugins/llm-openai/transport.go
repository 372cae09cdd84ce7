package llmopenai

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// The route's HTTP side: one POST of a JSON body, its error replies, and
// the server-sent events of a streamed reply. The request body and the
// chunks are this package's own types (request.go, translate.go), so no
// SDK is needed: the one this replaced (openai-go) added about 20 MB to the
// binary and 3 ms to every start for what these hundred lines do.

// transport posts JSON to one OpenAI-compatible endpoint.
type transport struct {
	base   string // the base URL, ending in "/"
	client *http.Client
	header http.Header // set on every request (Authorization, User-Agent, the configured headers)
}

// maxErrorBody bounds the body of an error reply that is read.
const maxErrorBody = 1 << 20

// post sends body to base+path. A reply with status 400 or more is read
// (at most maxErrorBody bytes), closed, and returned as an *apiError; any
// other reply is returned for the caller to read and close.
func (t *transport) post(ctx context.Context, path string, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = t.header.Clone()
	req.Header.Set("Content-Type", "application/json")
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	res, err := t.client.Do(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode < 400 {
		return res, nil
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	if err != nil {
		return nil, err
	}
	return nil, newAPIError(res, data)
}

// apiError is an error reply: its status and what its body said, read as
// OpenAI's {"error": {"message", "code", "type", "param"}} (also a bare
// {"error": "text"} or a top-level "message", as some servers send).
type apiError struct {
	StatusCode                 int
	Message, Code, Type, Param string
	// Response is the reply; its body is closed.
	Response *http.Response
}

func newAPIError(res *http.Response, body []byte) *apiError {
	e := &apiError{StatusCode: res.StatusCode, Response: res}
	var w struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &w) != nil {
		return e
	}
	var obj struct {
		Message string          `json:"message"`
		Code    json.RawMessage `json:"code"`
		Type    string          `json:"type"`
		Param   string          `json:"param"`
	}
	var text string
	switch {
	case json.Unmarshal(w.Error, &obj) == nil:
		e.Message, e.Code, e.Type, e.Param = obj.Message, jsonScalar(obj.Code), obj.Type, obj.Param
	case json.Unmarshal(w.Error, &text) == nil:
		e.Message = text
	default:
		e.Message = w.Message
	}
	return e
}

// jsonScalar is a JSON string's text, or a number's, "" for null or absent.
func jsonScalar(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if t := strings.TrimSpace(string(raw)); t != "null" {
		return t
	}
	return ""
}

// Error says the status, as the replaced SDK did ("OpenAI API error: 429
// Too Many Requests"); the message is read by classifyHTTP.
func (e *apiError) Error() string {
	if text := http.StatusText(e.StatusCode); text != "" {
		return fmt.Sprintf("OpenAI API error: %d %s", e.StatusCode, text)
	}
	return fmt.Sprintf("OpenAI API error: %d", e.StatusCode)
}

// sseEvent is one server-sent event: its type (the event field) and its
// data lines joined, each followed by "\n".
type sseEvent struct {
	Type string
	Data []byte
}

// streamError is an event whose data carries an "error" key: the provider
// failed mid-stream.
type streamError struct {
	Message string
	Event   sseEvent
}

func (e *streamError) Error() string { return e.Message }

// sseDecoder reads server-sent events: fields "event" and "data" (one
// space after the colon dropped), comments and other fields ignored, an
// event dispatched at a blank line, an event cut off by the end of the
// body dropped (as the specification says). Lines may be up to 32 MiB.
type sseDecoder struct {
	scn *bufio.Scanner
	evt sseEvent
	err error
}

// maxSSELine bounds one line of a stream.
const maxSSELine = 32 << 20

func newSSEDecoder(r io.Reader) *sseDecoder {
	scn := bufio.NewScanner(r)
	scn.Buffer(nil, maxSSELine)
	return &sseDecoder{scn: scn}
}

// next reads the next event; false at the end of the body or on a read
// error (see err).
func (d *sseDecoder) next() bool {
	event := ""
	var data []byte
	for d.scn.Scan() {
		line := d.scn.Bytes()
		if len(line) == 0 {
			if len(data) == 0 {
				event = ""
				continue
			}
			d.evt = sseEvent{Type: event, Data: data}
			return true
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(name) {
		case "event":
			event = string(value)
		case "data":
			data = append(append(data, value...), '\n')
		}
	}
	d.err = d.scn.Err()
	return false
}

// event is the event next read.
func (d *sseDecoder) event() sseEvent { return d.evt }

// chunkOf decodes one event of a chat-completions stream: done is true at
// "[DONE]"; an event with an "error" key is a *streamError.
func chunkOf(ev sseEvent, c *wireChunk) (done bool, err error) {
	if bytes.HasPrefix(ev.Data, []byte("[DONE]")) {
		return true, nil
	}
	if bytes.Contains(ev.Data, []byte(`"error"`)) {
		var w struct {
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(ev.Data, &w) == nil && len(w.Error) > 0 {
			text := string(w.Error)
			var s string
			if json.Unmarshal(w.Error, &s) == nil {
				text = s
			}
			return false, &streamError{Message: "received error while streaming: " + text, Event: ev}
		}
	}
	*c = wireChunk{}
	return false, json.Unmarshal(ev.Data, c)
}

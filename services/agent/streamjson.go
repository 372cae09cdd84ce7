package agent

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
)

// MarshalJSON writes e in its wire form, the one every front end shares
// (`harness run --output stream-json`, the web app's event stream): one
// JSON object, "v" ([EventVersion]) first, then the fields of [Event]
// that are set, with their json names:
//
//	{"v":1,"type":"session","sessionId":"…","cwd":"/repo","model":"deepseek/deepseek-chat","resumed":false}
//	{"v":1,"type":"user","sessionId":"…","turn":1,"text":"fix it"}
//	{"v":1,"type":"step","sessionId":"…","turn":1,"step":1}
//	{"v":1,"type":"text","sessionId":"…","turn":1,"step":1,"text":"Done"}
//	{"v":1,"type":"usage","sessionId":"…","turn":1,"step":1,"usage":{…},"total":{…},"contextTokens":950,"estimated":false}
//	{"v":1,"type":"tool_call","sessionId":"…","turn":1,"step":1,"toolCall":{"id":"c1","name":"read","arguments":"{…}"}}
//	{"v":1,"type":"result","sessionId":"…","turn":1,"result":{"result":"Done","sessionId":"…",…}}
//
// Zero fields are left out, except the booleans a type always carries:
// "resumed" on session events and "estimated" on usage events are present
// when false too (last in the object). HTML characters are not escaped ("<" stays "<"), and
// the object has no trailing newline. Unmarshalling the object into an
// Event gives e back ("v" is ignored).
func (e Event) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := e.encode(&b); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// encode writes the wire form of e and a newline to b.
func (e Event) encode(b *bytes.Buffer) error {
	type plain Event // the fields without the MarshalJSON method
	out := struct {
		V int `json:"v"`
		plain
		Resumed   *bool `json:"resumed,omitempty"`
		Estimated *bool `json:"estimated,omitempty"`
	}{V: EventVersion, plain: plain(e)}
	switch e.Type {
	case EventSession:
		out.Resumed = &e.Resumed
	case EventUsage:
		out.Estimated = &e.Estimated
	}
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// StreamJSONEncoder writes events as stream-json: each event's wire form
// ([Event.MarshalJSON]) on a line of its own, written with one Write call.
// It is safe for concurrent use; lines of concurrent calls do not
// interleave.
type StreamJSONEncoder struct {
	mu  sync.Mutex
	w   io.Writer
	buf bytes.Buffer
}

// NewStreamJSONEncoder returns an encoder writing to w.
func NewStreamJSONEncoder(w io.Writer) *StreamJSONEncoder {
	return &StreamJSONEncoder{w: w}
}

// Encode writes e as one line. It returns the error of encoding (a
// [ToolResultEvent.Meta] or [Event.State] that is not valid JSON) or of
// w; nothing is written when encoding fails. Tool progress events
// ([EventToolProgress]) are left out: as in Claude Code's stream-json, a
// call's output arrives whole in its tool_result, and the line count of a
// run does not depend on how long its commands took.
func (s *StreamJSONEncoder) Encode(e Event) error {
	if e.Type == EventToolProgress {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf.Reset()
	if err := e.encode(&s.buf); err != nil {
		return err
	}
	_, err := s.w.Write(s.buf.Bytes())
	return err
}

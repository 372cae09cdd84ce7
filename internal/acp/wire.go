package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// MaxMessageBytes bounds one JSON-RPC message read from the client (one
// line). A longer line is answered with an Invalid Request error and
// skipped, so memory stays bounded whatever the client sends.
const MaxMessageBytes = 8 << 20

// JSON-RPC error codes the guard answers with.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// lockedWriter serializes whole-message writes of the SDK's connection and
// of the guard to one writer; written (optional) sees each message after
// it was written.
type lockedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	written func([]byte)
}

// Write implements io.Writer.
func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	n, err := l.w.Write(b)
	l.mu.Unlock()
	if err == nil && l.written != nil {
		l.written(b)
	}
	return n, err
}

// guard reads the client's messages, one per line, and passes well-formed
// JSON-RPC 2.0 messages on to pw (the SDK's input). It answers the rest
// itself on out: a line that is not JSON gets a Parse error (-32700, id
// null), JSON that is not a JSON-RPC 2.0 message (an array, a scalar, no
// "jsonrpc": "2.0", neither a method nor a result or error) an Invalid
// Request error (-32600) with the message's id when it has a usable one,
// and a line over MaxMessageBytes an Invalid Request error. It returns at
// the end of in, or when pw is closed, and closes pw.
func guard(in io.Reader, pw *io.PipeWriter, out io.Writer) {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r, MaxMessageBytes)
		if tooLong {
			writeError(out, nil, codeInvalidRequest, fmt.Sprintf("Invalid Request: message over %d bytes", MaxMessageBytes))
		} else if len(bytes.TrimSpace(line)) > 0 {
			if msg, ok := check(line, out); ok {
				if _, werr := pw.Write(append(msg, '\n')); werr != nil {
					return
				}
			}
		}
		if err != nil {
			_ = pw.CloseWithError(err)
			return
		}
	}
}

// readLine reads one line (without its newline) of at most max bytes; a
// longer one is read to its end and dropped (tooLong). err is io.EOF after
// the last line.
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), tooLong, err
	}
}

// envelope is what check reads of a message.
type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// check returns line when it is a JSON-RPC 2.0 message, else answers it
// on out and returns false.
func check(line []byte, out io.Writer) ([]byte, bool) {
	if !json.Valid(line) {
		writeError(out, nil, codeParseError, "Parse error: the message is not valid JSON")
		return nil, false
	}
	trimmed := bytes.TrimSpace(line)
	if trimmed[0] != '{' {
		writeError(out, nil, codeInvalidRequest, "Invalid Request: a message is one JSON object (batches are not supported)")
		return nil, false
	}
	var env envelope
	if err := json.Unmarshal(trimmed, &env); err != nil {
		writeError(out, nil, codeInvalidRequest, "Invalid Request: "+err.Error())
		return nil, false
	}
	id := usableID(env.ID)
	var method string
	switch {
	case env.JSONRPC != "2.0":
		writeError(out, id, codeInvalidRequest, `Invalid Request: "jsonrpc" must be "2.0"`)
		return nil, false
	case env.Method != nil && (json.Unmarshal(env.Method, &method) != nil || method == ""):
		writeError(out, id, codeInvalidRequest, `Invalid Request: "method" must be a non-empty string`)
		return nil, false
	case env.Method == nil && env.Result == nil && env.Error == nil:
		writeError(out, id, codeInvalidRequest, `Invalid Request: a message needs "method" (a request or notification) or "result" or "error" (a response)`)
		return nil, false
	case env.ID != nil && id == nil:
		writeError(out, nil, codeInvalidRequest, `Invalid Request: "id" must be a string, a number or null`)
		return nil, false
	}
	return trimmed, true
}

// usableID returns raw when it is a JSON-RPC id (a string, a number or
// null), else nil.
func usableID(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	switch raw[0] {
	case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return raw
	}
	return nil
}

// writeError writes a JSON-RPC error response (id null when id is nil).
func writeError(out io.Writer, id json.RawMessage, code int, message string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, message}})
	if err != nil {
		return
	}
	_, _ = out.Write(append(b, '\n'))
}

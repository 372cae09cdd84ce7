package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxHeaderLine bounds one header line of a message ("Content-Length: N").
const maxHeaderLine = 4 << 10

// ErrMessageTooLarge is returned by the reader (and so ends the connection)
// when a server announces a message larger than the configured bound.
var ErrMessageTooLarge = errors.New("lsp: message too large")

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// message is any JSON-RPC 2.0 message: a request (ID and Method), a
// notification (Method only) or a response (ID and Result or Error).
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// handler answers what a server sends: notifications (reply is nil) and
// requests (the returned value is the result; an error becomes a JSON-RPC
// error). It runs on the read loop, so it must not block.
type handler func(method string, params json.RawMessage) (any, error)

// conn is a JSON-RPC 2.0 connection with LSP base-protocol framing
// (Content-Length headers) over a byte stream. Every message read is
// bounded by max bytes: a server that announces more ends the connection
// with ErrMessageTooLarge before anything is allocated for it. Writes are
// serialized; requests wait for their response or their context.
//
// The read loop (run) is started by the owner and returns when the stream
// ends or breaks; every pending and later call then fails with that error.
type conn struct {
	w      io.Writer
	r      *bufio.Reader
	max    int
	handle handler

	wmu sync.Mutex // serializes writes

	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan *message
	err     error         // set once the read loop ended
	done    chan struct{} // closed when the read loop ended
}

func newConn(r io.Reader, w io.Writer, maxBytes int, h handler) *conn {
	return &conn{w: w, r: bufio.NewReaderSize(r, maxHeaderLine), max: maxBytes, handle: h,
		pending: map[int64]chan *message{}, done: make(chan struct{})}
}

// run reads and dispatches messages until the stream ends or a message is
// malformed; it returns the reason (io.EOF for a clean end).
func (c *conn) run() error {
	var err error
	for {
		var body []byte
		if body, err = c.read(); err != nil {
			break
		}
		var m message
		if jerr := json.Unmarshal(body, &m); jerr != nil {
			err = fmt.Errorf("lsp: malformed message: %w", jerr)
			break
		}
		c.dispatch(&m)
	}
	c.mu.Lock()
	c.err = err
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
	c.mu.Unlock()
	close(c.done)
	return err
}

// read returns the body of the next message, bounded by c.max.
func (c *conn) read() ([]byte, error) {
	length := -1
	for {
		line, err := c.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("lsp: header line longer than %d bytes", maxHeaderLine)
		}
		if err != nil {
			if err == io.EOF && len(line) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		text := strings.TrimRight(string(line), "\r\n")
		if text == "" {
			break
		}
		name, value, ok := strings.Cut(text, ":")
		if !ok {
			return nil, fmt.Errorf("lsp: malformed header line %q", truncate(text, 80))
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("lsp: bad Content-Length %q", truncate(value, 40))
			}
			length = n
		}
	}
	if length < 0 {
		return nil, errors.New("lsp: message without Content-Length")
	}
	if length > c.max {
		return nil, fmt.Errorf("%w: %d bytes announced, the limit is %d (maxMessageBytes)", ErrMessageTooLarge, length, c.max)
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(c.r, body); err != nil {
		return nil, fmt.Errorf("lsp: short message body: %w", err)
	}
	return body, nil
}

// dispatch delivers a response to its caller, or runs the handler for a
// notification or a request (answering the request).
func (c *conn) dispatch(m *message) {
	if m.Method == "" {
		id, err := strconv.ParseInt(string(m.ID), 10, 64)
		if err != nil {
			return // not one of ours
		}
		c.mu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ch != nil {
			ch <- m
		}
		return
	}
	result, herr := c.handle(m.Method, m.Params)
	if len(m.ID) == 0 {
		return
	}
	reply := map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result}
	if herr != nil {
		reply = map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": rpcError{Code: -32601, Message: herr.Error()}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	_ = c.write(ctx, reply)
	cancel()
}

// call sends a request and decodes its result into out (may be nil). It
// returns when the response arrives, the connection ends, or ctx ends.
func (c *conn) call(ctx context.Context, method string, params, out any) error {
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return fmt.Errorf("lsp: connection closed: %w", err)
	}
	c.nextID++
	id := c.nextID
	ch := make(chan *message, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.write(ctx, map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		c.forget(id)
		return err
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return fmt.Errorf("lsp: %s: connection closed: %w", method, c.closedErr())
		}
		if m.Error != nil {
			return fmt.Errorf("lsp: %s: %w", method, m.Error)
		}
		if out != nil && len(m.Result) > 0 {
			return json.Unmarshal(m.Result, out)
		}
		return nil
	case <-ctx.Done():
		c.forget(id)
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		_ = c.notify(cctx, "$/cancelRequest", map[string]any{"id": id})
		cancel()
		return fmt.Errorf("lsp: %s: %w", method, context.Cause(ctx))
	}
}

func (c *conn) forget(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

func (c *conn) closedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// notify sends a notification.
func (c *conn) notify(ctx context.Context, method string, params any) error {
	return c.write(ctx, map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// deadliner is a writer whose writes can be bounded (an *os.File pipe).
type deadliner interface{ SetWriteDeadline(time.Time) error }

// write frames and sends one message. When the writer supports deadlines
// (the server's stdin pipe does), ctx's deadline bounds the write, so a
// server that stops reading cannot block the caller past it.
func (c *conn) write(ctx context.Context, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("lsp: encode: %w", err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", len(body))
	b.Write(body)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if d, ok := c.w.(deadliner); ok {
		dl, _ := ctx.Deadline()
		_ = d.SetWriteDeadline(dl) // zero: none
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("lsp: write: %w", err)
	}
	if _, err := c.w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("lsp: write: %w", err)
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

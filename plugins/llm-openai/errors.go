package llmopenai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/dshgo/harness/services/llm"
)

// contextOverflow matches the wording OpenAI-compatible providers use when a
// request exceeds the context window.
var contextOverflow = regexp.MustCompile(`(?i)context[ _-]?(length|window)|maximum context|too many tokens|prompt is too long|input is too long|exceeds? the (model's )?(max|context)`)

// classify maps an attempt's error to an *llm.Error. parent is the caller's
// context, ctx the attempt's (cancelled with errIdle on silence).
func classify(parent, ctx context.Context, err error) *llm.Error {
	if parent.Err() != nil {
		return llm.Aborted(parent)
	}
	if errors.Is(context.Cause(ctx), errIdle) {
		return &llm.Error{Code: llm.CodeNetwork, Message: errIdle.Error(), Err: err}
	}
	var api *openai.Error
	if errors.As(err, &api) {
		return classifyHTTP(api)
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		code := llm.CodeServer
		if contextOverflow.MatchString(se.Message) {
			code = llm.CodeContextLength
		}
		return &llm.Error{Code: code, Message: se.Message, Err: err}
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) {
		return &llm.Error{Code: llm.CodeProtocol, Message: "malformed stream event: " + err.Error(), Err: err}
	}
	if isNetwork(err) {
		return &llm.Error{Code: llm.CodeNetwork, Message: err.Error(), Err: err}
	}
	return &llm.Error{Code: llm.CodeProtocol, Message: err.Error(), Err: err}
}

func isNetwork(err error) bool {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe)
}

func classifyHTTP(api *openai.Error) *llm.Error {
	msg := strings.TrimSpace(api.Message)
	if msg == "" {
		msg = http.StatusText(api.StatusCode)
	}
	e := &llm.Error{Status: api.StatusCode, Message: msg, Err: api}
	if api.Response != nil {
		e.RetryAfter = retryAfter(api.Response.Header, time.Now())
	}
	detail := msg + " " + api.Code + " " + api.Type
	switch s := api.StatusCode; {
	case s == http.StatusUnauthorized || s == http.StatusForbidden || s == http.StatusPaymentRequired:
		e.Code = llm.CodeAuth
		e.Message = "the endpoint rejected the API key: " + msg
	case s == http.StatusTooManyRequests:
		e.Code = llm.CodeRateLimit
	case s == http.StatusRequestTimeout || s >= 500:
		e.Code = llm.CodeServer
	case contextOverflow.MatchString(detail):
		e.Code = llm.CodeContextLength
	default:
		e.Code = llm.CodeProtocol
	}
	return e
}

// retryAfter reads retry-after-ms (OpenAI) or Retry-After (seconds or an
// HTTP date); 0 when absent or invalid.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

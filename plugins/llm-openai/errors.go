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
	var api *apiError
	if errors.As(err, &api) {
		return classifyHTTP(api)
	}
	var se *streamError
	if errors.As(err, &se) {
		return fromStreamError(se)
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

func classifyHTTP(api *apiError) *llm.Error {
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
	case s == http.StatusPaymentRequired || (s == http.StatusTooManyRequests && isQuota(api.Code+" "+api.Type)):
		e.Code = llm.CodeBilling
		e.Message = billingMessage(msg)
		e.RetryAfter = 0
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
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

// isQuota tells a provider error code or type that means the account's
// balance or quota is spent (OpenAI: insufficient_quota; DeepSeek 402:
// "Insufficient Balance").
func isQuota(codeOrType string) bool {
	c := strings.ToLower(codeOrType)
	return strings.Contains(c, "insufficient_quota") || strings.Contains(c, "insufficient_balance") || strings.Contains(c, "billing")
}

// billingMessage sends the user to the provider's billing page.
func billingMessage(msg string) string {
	return "the provider account has no balance or quota left: " + msg +
		" (top up or raise the quota in the provider's billing console; retrying will not help)"
}

// fromStreamError turns an error event received mid-stream (`data:
// {"error": {...}}`) into an *llm.Error whose message is the provider's
// text, not the raw JSON. The provider's code, when it has one, follows in
// brackets.
func fromStreamError(se *streamError) *llm.Error {
	var w struct {
		Error json.RawMessage `json:"error"`
	}
	msg, code := se.Message, ""
	if json.Unmarshal(se.Event.Data, &w) == nil && len(w.Error) > 0 {
		var obj struct {
			Message string          `json:"message"`
			Code    json.RawMessage `json:"code"`
			Type    string          `json:"type"`
		}
		var text string
		switch {
		case json.Unmarshal(w.Error, &text) == nil && text != "":
			msg = text
		case json.Unmarshal(w.Error, &obj) == nil && obj.Message != "":
			msg = obj.Message
			var cs string
			if json.Unmarshal(obj.Code, &cs) != nil {
				cs = strings.Trim(string(obj.Code), `"`)
				if cs == "null" {
					cs = ""
				}
			}
			code = cs
			if code == "" {
				code = obj.Type
			}
		}
	}
	e := &llm.Error{Code: llm.CodeServer, Message: msg, Err: se}
	switch {
	case isQuota(code + " " + msg):
		e.Code, e.Message = llm.CodeBilling, billingMessage(msg)
	case contextOverflow.MatchString(msg):
		e.Code = llm.CodeContextLength
	}
	if code != "" && e.Code != llm.CodeBilling {
		e.Message += " [" + code + "]"
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

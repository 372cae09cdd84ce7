package netproxy

import (
	"context"
	"net/netip"
	"sync"
)

// Answer is a person's answer about a host the rules do not allow.
type Answer uint8

const (
	// AskUnavailable: no one can answer (headless): refused with the
	// rule to add.
	AskUnavailable Answer = iota
	// AskAllowOnce allows this one connection.
	AskAllowOnce
	// AskAllowAlways allows the host for the rest of the proxy's life.
	AskAllowAlways
	// AskDeny refuses the host for the rest of the proxy's life.
	AskDeny
)

// Asker asks whoever can answer whether a command may connect to
// host:port. It blocks until an answer or ctx ends (then AskUnavailable).
type Asker func(ctx context.Context, host string, port int) Answer

// asks holds the answers given so far and the questions in flight, one
// per host: concurrent requests for a host wait for the one question.
type asks struct {
	mu      sync.Mutex
	granted map[string]bool // always
	denied  map[string]bool // deny
	flight  map[string]*question
}

type question struct {
	done chan struct{}
	ans  Answer
}

// decide applies the rules and, for a host they do not allow and do not
// deny, the person's answer (when Options.Ask is set). asked reports a
// refusal that a person (not a rule) made.
func (s *Server) decide(ctx context.Context, host string, port int) (v Verdict, asked bool) {
	v = s.opts.Rules.Decide(host)
	if v.Allowed || v.Rule != "" || s.opts.Ask == nil || !askable(host) {
		return v, false
	}
	h := normalize(host)
	a := &s.asks
	a.mu.Lock()
	switch {
	case a.granted[h]:
		a.mu.Unlock()
		return Verdict{Allowed: true, Rule: host}, false
	case a.denied[h]:
		a.mu.Unlock()
		return Verdict{}, true
	}
	q, waiting := a.flight[h]
	if !waiting {
		q = &question{done: make(chan struct{})}
		if a.flight == nil {
			a.flight, a.granted, a.denied = map[string]*question{}, map[string]bool{}, map[string]bool{}
		}
		a.flight[h] = q
	}
	a.mu.Unlock()
	if !waiting {
		q.ans = s.opts.Ask(ctx, host, port)
		a.mu.Lock()
		delete(a.flight, h)
		switch q.ans {
		case AskAllowAlways:
			a.granted[h] = true
		case AskDeny:
			a.denied[h] = true
		}
		a.mu.Unlock()
		close(q.done)
	} else {
		select {
		case <-q.done:
		case <-ctx.Done():
			return Verdict{}, false
		}
	}
	switch q.ans {
	case AskAllowOnce, AskAllowAlways:
		return Verdict{Allowed: true, Rule: host}, false
	case AskDeny:
		return Verdict{}, true
	}
	return Verdict{}, false
}

// askable reports whether host may be put to a person: an IP address or a
// DNS name (labels of letters, digits, '-' and '_', at most 253 bytes).
// The name comes from the sandboxed command; anything else is refused
// without a question, so a person is never shown crafted text as a host.
func askable(host string) bool {
	h := normalize(host)
	if _, err := netip.ParseAddr(h); err == nil {
		return true
	}
	if h == "" || len(h) > 253 {
		return false
	}
	n := 0
	for i := 0; i < len(h); i++ {
		switch c := h[i]; {
		case c == '.':
			if n == 0 {
				return false
			}
			n = 0
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
			if n++; n > 63 {
				return false
			}
		default:
			return false
		}
	}
	return n > 0
}

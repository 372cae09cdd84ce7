package tokenmeter

import (
	"sync"
	"unsafe"
)

// Request is what one chat request sends: the envelope (model, system prompt,
// tools) and the messages.
type Request struct {
	Model    string       `json:"model"`
	System   string       `json:"system,omitempty"`
	Tools    []ToolSchema `json:"tools,omitempty"`
	Messages []Message    `json:"messages"`
}

// Exchange is one finished request: what was sent, what came back, and the
// provider's usage (nil when the stream carried none).
type Exchange struct {
	Request Request
	Reply   Message
	Usage   *Usage
}

// Source says where a projection's figure comes from.
type Source string

const (
	// SourceUsage: the last anchored request's prompt_tokens plus the
	// estimate of the messages appended since.
	SourceUsage Source = "usage"
	// SourceEstimated: a full estimate of system, tools and messages, or
	// an anchor whose prompt_tokens fell below that estimate (the estimate
	// was anchored instead) plus the estimate of the messages since.
	SourceEstimated Source = "estimated"
)

// Breakdown is the heuristic composition of a request. Its parts come from
// the estimator and do not sum to an anchored projection.
type Breakdown struct {
	SystemTokens  int `json:"systemTokens"`
	ToolsTokens   int `json:"toolsTokens"`
	MessageTokens int `json:"messageTokens"`
}

// Projection is the projected size of a request before it is sent.
type Projection struct {
	Model string `json:"model"`
	// ContextWindow is the model's window in tokens (0: unknown).
	ContextWindow int `json:"contextWindow,omitempty"`
	// Tokens is the projected prompt size.
	Tokens int    `json:"tokens"`
	Source Source `json:"source"`
	// PercentUsed is 100×Tokens/ContextWindow (0 when the window is unknown).
	PercentUsed float64   `json:"percentUsed,omitempty"`
	Breakdown   Breakdown `json:"breakdown"`
}

// Stats are a session's cumulative figures: the sum of its requests.
type Stats struct {
	Requests int `json:"requests"`
	// EstimatedRequests counts requests recorded without provider usage.
	EstimatedRequests int            `json:"estimatedRequests"`
	Totals            Figures        `json:"totals"`
	Last              *RequestRecord `json:"last,omitempty"`
}

// Session holds one session's usage anchor, message-price cache and totals.
// It is safe for concurrent use.
//
// Anchoring: after a request with usage, the anchor is {envelope, the
// request's messages, prompt_tokens}. A later request projects to
// prompt_tokens + the estimate of the messages appended after the anchor's,
// provided the envelope (model, system prompt, tools in order) is unchanged
// and the anchor's messages are still its prefix. Otherwise (a changed
// envelope, a compaction that rewrote history) it falls back to a full
// estimate that includes the system prompt and the tool schemas. Only the
// latest request anchors (reference C4): one without usage drops the
// anchor, so projections after it are estimates until usage is reported
// again.
type Session struct {
	id    string
	meter *Meter

	mu            sync.Mutex
	prices        map[uint64]int // message hash → price, for the current history
	seen          []seenMessage  // the last history, by position, to skip rehashing
	env           envelopePrice
	anchor        *anchor
	contextWindow int
	stats         Stats
}

// anchor is the latest request's baseline. prompt is the provider's
// prompt_tokens, or, when that figure was below the heuristic price of the
// same request, the heuristic price (estimated), as dsh's "usage ≥ full
// anchor" rule (reference C4): a provider figure under the estimator's
// scale would make the projection of what follows it too small.
type anchor struct {
	env       uint64
	hashes    []uint64
	prompt    int
	estimated bool
}

type envelopePrice struct {
	hash          uint64
	valid         bool
	system, tools int
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// SetContextWindow overrides the context window the meter knows for the
// session's model (for example the value in the LLM plugin's config). 0
// clears the override.
func (s *Session) SetContextWindow(tokens int) {
	s.mu.Lock()
	s.contextWindow = max(tokens, 0)
	s.mu.Unlock()
}

// Project returns the projected size of req (see [Session] for the rule).
// Each message is priced once per session: history is never recounted.
func (s *Session) Project(req Request) Projection {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, _, _ := s.project(req)
	return p
}

func (s *Session) project(req Request) (Projection, []uint64, uint64) {
	hashes, prices := s.priceMessages(req.Messages)
	env := hashEnvelope(req.Model, req.System, req.Tools)
	if !s.env.valid || s.env.hash != env {
		est := s.meter.est
		s.env = envelopePrice{hash: env, valid: true, system: PriceSystem(est, req.System), tools: PriceTools(est, req.Tools)}
	}
	total := 0
	for _, n := range prices {
		total += n
	}
	p := Projection{
		Model:         req.Model,
		ContextWindow: s.window(req.Model),
		Breakdown:     Breakdown{SystemTokens: s.env.system, ToolsTokens: s.env.tools, MessageTokens: total},
	}
	if a := s.anchor; a != nil && a.env == env && hasPrefix(hashes, a.hashes) {
		p.Tokens, p.Source = a.prompt, SourceUsage
		if a.estimated {
			p.Source = SourceEstimated
		}
		for _, n := range prices[len(a.hashes):] {
			p.Tokens += n
		}
	} else {
		p.Tokens, p.Source = s.env.system+s.env.tools+total, SourceEstimated
	}
	if p.ContextWindow > 0 {
		p.PercentUsed = 100 * float64(p.Tokens) / float64(p.ContextWindow)
	}
	return p, hashes, env
}

func (s *Session) window(model string) int {
	if s.contextWindow > 0 {
		return s.contextWindow
	}
	md, _ := s.meter.Model(model)
	return md.ContextWindow
}

// seenMessage remembers a message of the last history by the identity of its
// strings: Go strings are immutable, so the same data pointer and length
// means the same bytes, and the hash need not be recomputed.
type seenMessage struct {
	msg  Message
	hash uint64
}

func sameString(a, b string) bool {
	return len(a) == len(b) && (len(a) == 0 || unsafe.StringData(a) == unsafe.StringData(b))
}

func sameMessage(a, b Message) bool {
	if a.Role != b.Role || !sameString(a.Content, b.Content) || !sameString(a.Reasoning, b.Reasoning) ||
		a.ToolCallID != b.ToolCallID || len(a.ToolCalls) != len(b.ToolCalls) {
		return false
	}
	for i, c := range a.ToolCalls {
		d := b.ToolCalls[i]
		if c.ID != d.ID || c.Name != d.Name || !sameString(c.Arguments, d.Arguments) {
			return false
		}
	}
	return true
}

// priceMessages hashes and prices msgs, reusing the price of every message
// already seen in this session's current history.
func (s *Session) priceMessages(msgs []Message) ([]uint64, []int) {
	hashes := make([]uint64, len(msgs))
	prices := make([]int, len(msgs))
	next := make(map[uint64]int, len(msgs))
	seen := make([]seenMessage, len(msgs))
	for i, msg := range msgs {
		var h uint64
		if i < len(s.seen) && sameMessage(s.seen[i].msg, msg) {
			h = s.seen[i].hash
		} else {
			h = hashMessage(msg)
		}
		seen[i] = seenMessage{msg: msg, hash: h}
		n, ok := next[h]
		if !ok {
			if n, ok = s.prices[h]; !ok {
				n = PriceMessage(s.meter.est, msg)
			}
			next[h] = n
		}
		hashes[i], prices[i] = h, n
	}
	s.prices, s.seen = next, seen
	return hashes, prices
}

func hasPrefix(hashes, prefix []uint64) bool {
	if len(prefix) > len(hashes) {
		return false
	}
	for i, h := range prefix {
		if hashes[i] != h {
			return false
		}
	}
	return true
}

// Record books one finished request and returns its record. With usage, the
// figures are the provider's (prompt_tokens as the context used, cache hits
// inside it, reasoning inside completion) and the request becomes the anchor;
// a prompt_tokens below the estimator's price of the request anchors that
// price instead (projections then say SourceEstimated), dsh's "usage ≥
// heuristic anchor" guard (reference C4, C7). The record keeps the
// provider's figures either way.
// Without usage (nil, or negative counts) the record is Estimated: the prompt
// is the projection and the completion the estimate of x.Reply; the previous
// anchor stays. Cost is filled in when the model has prices.
func (s *Session) Record(x Exchange) RequestRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, hashes, env := s.project(x.Request)
	rec := RequestRecord{Model: x.Request.Model}
	if u := x.Usage; u != nil && u.Validate() == nil {
		rec.Figures = Figures{
			PromptTokens:     u.PromptTokens,
			CacheHitTokens:   u.CacheHitTokens(),
			CacheMissTokens:  u.CacheMissTokens(),
			CompletionTokens: u.CompletionTokens,
			ReasoningTokens:  u.ReasoningTokens(),
		}
		a := &anchor{env: env, hashes: hashes, prompt: u.PromptTokens}
		if full := p.Breakdown.SystemTokens + p.Breakdown.ToolsTokens + p.Breakdown.MessageTokens; u.PromptTokens < full {
			a.prompt, a.estimated = full, true
		}
		s.anchor = a
	} else {
		// Only the latest call anchors (C4); one without usage leaves an
		// estimate, so the older provider figure no longer applies.
		s.anchor = nil
		est := s.meter.est
		reasoning := est.Count(x.Reply.Reasoning)
		rec.Estimated = true
		rec.Figures = Figures{
			PromptTokens:     p.Tokens,
			CacheMissTokens:  p.Tokens,
			CompletionTokens: max(0, PriceMessage(est, x.Reply)-RoleOverhead),
			ReasoningTokens:  reasoning,
		}
	}
	if md, ok := s.meter.Model(x.Request.Model); ok && md.Prices != nil {
		rec.Cost = md.Prices.Cost(rec.CacheHitTokens, rec.CacheMissTokens, rec.CompletionTokens)
		rec.Priced = true
	}
	s.stats.Requests++
	if rec.Estimated {
		s.stats.EstimatedRequests++
	}
	s.stats.Totals.add(rec.Figures)
	last := rec
	s.stats.Last = &last
	return rec
}

// Stats returns a copy of the session's cumulative figures.
func (s *Session) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	if st.Last != nil {
		last := *st.Last
		st.Last = &last
	}
	return st
}

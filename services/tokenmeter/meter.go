package tokenmeter

import (
	"sync"
)

// Model describes one model for the meter: its context window and prices.
type Model struct {
	// ContextWindow is the model's context size in tokens; 0 is unknown.
	ContextWindow int `yaml:"contextWindow" json:"contextWindow,omitempty" jsonschema:"minimum=0"`
	// Prices enable cost figures; nil leaves costs unpriced.
	// Prices per million tokens.
	Prices *Prices `yaml:"prices" json:"prices,omitempty"`
}

// Meter is the token meter service (key "tokenMeter"). It prices text,
// messages and tool schemas with its [Estimator] and keeps one [Session] per
// session id for usage anchoring and projections. It is safe for concurrent
// use.
type Meter struct {
	est    Estimator
	models map[string]Model

	mu       sync.Mutex
	sessions map[string]*Session
}

// NewMeter returns a meter pricing with est (Heuristic when nil) and knowing
// models by name.
func NewMeter(est Estimator, models map[string]Model) *Meter {
	if est == nil {
		est = Heuristic{}
	}
	m := &Meter{est: est, models: map[string]Model{}, sessions: map[string]*Session{}}
	for k, v := range models {
		m.models[k] = v
	}
	return m
}

// Estimator returns the estimator the meter prices with.
func (m *Meter) Estimator() Estimator { return m.est }

// Count returns the token count of text.
func (m *Meter) Count(text string) int { return m.est.Count(text) }

// CountMessage returns the price of one message (see [PriceMessage]).
func (m *Meter) CountMessage(msg Message) int { return PriceMessage(m.est, msg) }

// CountMessages returns the sum of the messages' prices.
func (m *Meter) CountMessages(msgs []Message) int {
	n := 0
	for _, msg := range msgs {
		n += PriceMessage(m.est, msg)
	}
	return n
}

// CountSystem returns the price of a system prompt (see [PriceSystem]).
func (m *Meter) CountSystem(system string) int { return PriceSystem(m.est, system) }

// CountTools returns the price of a tool list (see [PriceTools]).
func (m *Meter) CountTools(tools []ToolSchema) int { return PriceTools(m.est, tools) }

// CountRequest returns the full estimate of a request: system, tools and
// every message, with no anchor.
func (m *Meter) CountRequest(req Request) int {
	return m.CountSystem(req.System) + m.CountTools(req.Tools) + m.CountMessages(req.Messages)
}

// Model returns what the meter knows about the named model.
func (m *Meter) Model(name string) (Model, bool) {
	md, ok := m.models[name]
	return md, ok
}

// Session returns the session with id, creating it on first use.
func (m *Meter) Session(id string) *Session {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[id]
	if s == nil {
		s = &Session{id: id, meter: m}
		m.sessions[id] = s
	}
	return s
}

// DropSession forgets the session with id (its anchors, caches and totals).
func (m *Meter) DropSession(id string) {
	m.mu.Lock()
	delete(m.sessions, id)
	m.mu.Unlock()
}

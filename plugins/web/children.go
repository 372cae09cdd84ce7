package web

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/subagent"
)

// subagentOrigin is the header origin of a subagent's session
// (plugins/subagent-inprocess.Origin); subagentState the state key that
// records how it was started.
const (
	subagentOrigin = "subagent"
	subagentState  = "subagent"
)

// Bounds of the subagent cards.
const (
	maxChildCards = 100  // children shown when a session is replayed
	cardText      = 2000 // bytes of a child's answer on its card
)

const childReadOnly = "a subagent's session: its parent runs it"

// Subagent is a child card in its parent's conversation (the event
// `subagent`): sent when the child starts (State running) and when a turn
// of it settles (State completed, failed or aborted, with Usage), and when
// the parent is replayed (State settled for a stored child, failed when its
// log ends with a failed model call, running when it runs here now).
type Subagent struct {
	ID          string `json:"id"`
	Parent      string `json:"parent"`
	Agent       string `json:"agent,omitempty"` // the agent definition (persona) it runs, if any
	Description string `json:"description,omitempty"`
	Provider    string `json:"provider,omitempty"`
	State       string `json:"state"`
	Error       string `json:"error,omitempty"`
	// Text is the start of the child's last answer (at most 2000 bytes).
	Text  string          `json:"text,omitempty"`
	Usage *subagent.Usage `json:"usage,omitempty"`
	Steps int             `json:"steps,omitempty"`
}

// started shows a child starting in its parent's conversation (when this
// server has the parent open) and makes the child's live view.
func (h *hub) started(_ context.Context, info subagent.Info) error {
	p := h.get(info.Parent)
	if p == nil {
		return nil
	}
	p.publishWeb(webEvent{Type: EventSubagent, Subagent: &Subagent{ID: info.ID, Parent: info.Parent, Agent: info.Agent,
		Description: info.Description, Provider: info.Provider, State: "running"}})
	if c := h.childLive(p, info.ID, nil); c != nil {
		c.setChildRunning(true)
	}
	return nil
}

// settled shows a child's settled turn on its card.
func (h *hub) settled(_ context.Context, st subagent.Settlement) error {
	if c := h.get(st.Info.ID); c != nil && c.child {
		c.setChildRunning(false)
	}
	p := h.get(st.Info.Parent)
	if p == nil {
		return nil
	}
	u := st.Outcome.Usage
	p.publishWeb(webEvent{Type: EventSubagent, Subagent: &Subagent{ID: st.Info.ID, Parent: st.Info.Parent, Agent: st.Info.Agent,
		Description: st.Info.Description, Provider: st.Info.Provider, State: string(st.Outcome.Status), Error: st.Outcome.Error,
		Text: clip(st.Outcome.Text, cardText), Usage: &u, Steps: st.Outcome.Steps}})
	return nil
}

// relayChild puts e, an event of a descendant of parent, on the
// descendant's own read-only live session.
func (h *hub) relayChild(parent *live, e agent.Event) {
	c := h.childLive(parent, e.SessionID, &e)
	if c == nil {
		return
	}
	c.setChildRunning(e.Type != agent.EventResult)
	c.publishAgent(e)
}

// childLive returns the live view of child id (of parent's process),
// making it when there is none: a child met for the first time in a later
// turn (its earlier view was closed when idle) is seeded from its log's
// earlier turns, so that the relayed events that follow complete it.
func (h *hub) childLive(parent *live, id string, first *agent.Event) *live {
	if !sessions.ValidID(id) {
		return nil
	}
	if c := h.get(id); c != nil {
		return c
	}
	c := h.newLive(parent.svc, parent.cwd)
	c.id, c.readOnly, c.child = id, childReadOnly, true
	if first != nil && first.Type != agent.EventSession && first.Turn > 1 {
		ctx, cancel := context.WithTimeout(h.base, 10*time.Second)
		recs, err := agent.ReadSession(ctx, parent.svc.Sessions(), id)
		if err == nil {
			recs = slices.DeleteFunc(recs, func(r agent.Record) bool { return r.Type != agent.RecordSession && r.Turn >= first.Turn })
			h.replay(ctx, c, id, recs)
		}
		cancel()
	}
	c.publishWeb(webEvent{Type: EventReadOnly, Reason: c.readOnly})
	return h.register(c)
}

// setChildRunning marks a child's view running (not closed when idle) or
// settled.
func (l *live) setChildRunning(running bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running == running {
		return
	}
	l.running = running
	if running {
		l.disarmLocked()
	} else {
		l.lastUsed = time.Now()
		l.armIdleLocked()
	}
}

// readOnly registers a read-only view of session id: its log replayed
// (recs), then the reason it takes no input.
func (h *hub) readOnly(ctx context.Context, svc *agent.Service, id, cwd string, recs []agent.Record, reason string, child bool) *live {
	l := h.newLive(svc, cwd)
	l.id, l.readOnly, l.child = id, reason, child
	h.replay(ctx, l, id, recs)
	l.publishWeb(webEvent{Type: EventReadOnly, Reason: reason})
	return h.register(l)
}

// register adds a live made here (not through start) to the hub, or
// returns the one registered first; it arms the idle timer.
func (h *hub) register(l *live) *live {
	h.mu.Lock()
	if old := h.live[l.id]; old != nil {
		h.mu.Unlock()
		return old
	}
	if !h.closed {
		h.live[l.id] = l
	}
	h.mu.Unlock()
	l.mu.Lock()
	l.armIdleLocked()
	l.mu.Unlock()
	return l
}

// replay publishes the events of session id's log on l, with a card for
// each of its stored children where it started (before the first record
// written after the child's creation).
func (h *hub) replay(ctx context.Context, l *live, id string, recs []agent.Record) {
	cards := h.storedChildren(ctx, l.svc, id)
	for _, r := range visibleRecords(recs) {
		for len(cards) > 0 && !r.Time.IsZero() && cards[0].created.Before(r.Time) {
			l.publishWeb(webEvent{Type: EventSubagent, Subagent: &cards[0].Subagent})
			cards = cards[1:]
		}
		for _, e := range eventsOfRecords(id, []agent.Record{r}) {
			l.publishAgent(e)
		}
	}
	for _, c := range cards {
		l.publishWeb(webEvent{Type: EventSubagent, Subagent: &c.Subagent})
	}
}

type storedCard struct {
	Subagent
	created time.Time
}

// storedChildren describes the stored subagent children of session id,
// oldest first, from their logs (at most maxChildCards).
func (h *hub) storedChildren(ctx context.Context, svc *agent.Service, id string) []storedCard {
	if id == "" {
		return nil
	}
	page, err := svc.Sessions().List(ctx, sessions.Query{Parent: id, Limit: maxChildCards})
	if err != nil {
		return nil
	}
	var out []storedCard
	for _, info := range page.Sessions {
		if info.Origin != subagentOrigin {
			continue
		}
		recs, err := agent.ReadSession(ctx, svc.Sessions(), info.ID)
		if err != nil {
			continue
		}
		card := cardOfRecords(info.ID, id, recs)
		if c := h.get(info.ID); c != nil && c.busy() {
			card.State = "running"
		}
		out = append(out, storedCard{Subagent: card, created: info.Created})
	}
	slices.SortFunc(out, func(a, b storedCard) int { return a.created.Compare(b.created) })
	return out
}

// cardOfRecords is the card of a stored child: its agent and description
// (its "subagent" state record), the usage of its model calls, its last
// answer, and whether its log ends with a failed model call.
func cardOfRecords(id, parent string, recs []agent.Record) Subagent {
	c := Subagent{ID: id, Parent: parent, State: "settled", Usage: &subagent.Usage{}}
	for _, r := range recs {
		switch r.Type {
		case agent.RecordState:
			if r.Key == subagentState {
				var st struct{ Description, Agent string }
				_ = json.Unmarshal(r.State, &st)
				c.Agent, c.Description = st.Agent, st.Description
			}
		case agent.RecordUsage:
			if r.Usage != nil {
				c.Usage.PromptTokens += r.Usage.PromptTokens
				c.Usage.CompletionTokens += r.Usage.CompletionTokens
				c.Usage.TotalTokens += r.Usage.TotalTokens
			}
			c.Steps++
		case agent.RecordAssistant:
			if r.Message != nil && r.Message.Content != "" {
				c.Text = clip(r.Message.Content, cardText)
			}
		}
	}
	if n := len(recs); n > 0 && recs[n-1].Type == agent.RecordError {
		c.State, c.Error = "failed", recs[n-1].Failure
	}
	return c
}

// clip cuts s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/agent/lifecycle"
	"github.com/dshgo/harness/services/compaction"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/tokenmeter"
)

// ErrNoCompaction: Compact was asked but no compaction plugin is mounted.
var ErrNoCompaction = errors.New("no compaction service: add a row `name: compaction` to harness.yml")

// ErrCompactBlocked: a PreCompact listener blocked a manual compaction.
var ErrCompactBlocked = errors.New("compaction blocked")

// Compact replaces the older part of the history by a model-written summary
// (trigger "manual"): the PreCompact event fires first (a block cancels),
// the compaction service picks the cut (never between a tool call and its
// results) and writes the summary, and a compaction record is appended to
// the log. instructions steer the summary (may be empty). It fails with
// ErrBusy during a turn, ErrNoCompaction without the service, and
// compaction.ErrNothingToCompact when the history is too short.
func (ss *Session) Compact(ctx context.Context, instructions string) (*CompactionInfo, error) {
	ss.turnMu.Lock()
	if ss.running {
		ss.turnMu.Unlock()
		return nil, ErrBusy
	}
	ss.running = true
	ss.turnMu.Unlock()
	defer func() { ss.turnMu.Lock(); ss.running = false; ss.turnMu.Unlock() }()
	return ss.compact(ctx, "manual", instructions, false)
}

// compact does one compaction (see Compact); trigger is "auto" or "manual".
// force (a CONTEXT_LENGTH error: the estimate was wrong) summarizes all but
// the last exchange when the usual cut would summarize nothing.
func (ss *Session) compact(ctx context.Context, trigger, instructions string, force bool) (*CompactionInfo, error) {
	comp, ok := core.Lookup(ss.svc.c, compaction.Key)
	if !ok {
		return nil, ErrNoCompaction
	}
	d, err := lifecycle.PreCompact.Run(ctx, ss.svc.c.To(ss.scope.ID()),
		lifecycle.Compacting{Session: ss.lifecycleSession(), Trigger: trigger, CustomInstructions: instructions}, lifecycle.Pass[lifecycle.Compacting])
	if err != nil {
		ss.svc.c.Logger().Warn("PreCompact listener failed", "session", ss.id, "err", err)
	} else if d.Block && trigger == "manual" {
		reason := d.Reason
		if reason == "" {
			reason = "a PreCompact hook blocked it"
		}
		return nil, fmt.Errorf("%w: %s", ErrCompactBlocked, reason)
	}
	ss.mu.Lock()
	hist := append([]llm.Message(nil), ss.history...)
	ss.mu.Unlock()
	meter, _ := core.Lookup(ss.svc.c, tokenmeter.Key)
	price := func(i int) int {
		if meter != nil {
			return meter.CountMessage(meterMessage(hist[i]))
		}
		return (len(hist[i].Content)+len(hist[i].Reasoning))/4 + 4
	}
	window := int(ss.model.ContextWindow)
	cut := comp.Cut(hist, price, window)
	if force && cut < 2 {
		for k := len(hist) - 1; k > 1; k-- {
			if hist[k].Role != llm.RoleTool {
				cut = max(cut, k)
				break
			}
		}
	}
	if cut == 0 || cut == 1 && len(hist) > 0 && isSummary(hist[0]) {
		return nil, compaction.ErrNothingToCompact
	}
	before := ss.projectHistory(ctx, hist)
	summary, err := comp.Summarize(ctx, ss.route, hist[:cut], instructions)
	if err != nil {
		return nil, err
	}
	msg := llm.Message{Role: llm.RoleUser, Content: summary}
	view := append([]llm.Message{msg}, hist[cut:]...)
	info := &CompactionInfo{Trigger: trigger, Summarized: cut, Kept: len(hist) - cut, TokensBefore: before}
	info.TokensAfter = ss.projectHistory(ctx, view)
	ss.mu.Lock()
	// A turn is never running concurrently (Run and Compact exclude each
	// other), so the history is still hist.
	ss.history = view
	clear(ss.turnStart)  // the turns before are summarized: no rewind reaches them
	ss.lastSnapshot = "" // the snapshot may have been summarized: send it again
	turn := ss.turn
	ss.mu.Unlock()
	werr := ss.write(Record{Type: RecordCompaction, Turn: turn, Message: &msg, Kept: info.Kept, Summarized: cut,
		Trigger: trigger, TokensBefore: info.TokensBefore, TokensAfter: info.TokensAfter})
	ss.observe(Event{Type: EventCompaction, Turn: turn, Compaction: info})
	return info, werr
}

func isSummary(m llm.Message) bool {
	return m.Role == llm.RoleUser && len(m.Content) >= len(compaction.SummaryPrefix) && m.Content[:len(compaction.SummaryPrefix)] == compaction.SummaryPrefix
}

// ContextUse is the context a session's next request would occupy.
type ContextUse struct {
	// Tokens is the projected request size: the last request's provider
	// usage plus the estimate of what was added since, or an estimate of
	// the whole (compacted) view when there is no usable anchor (after a
	// compaction, after a resume). Never a cumulative sum.
	Tokens int `json:"tokens"`
	// Window is the model's context window (0: unknown).
	Window int `json:"window,omitempty"`
	// Source is "usage" or "estimated" (see tokenmeter.Source).
	Source string `json:"source"`
}

// ContextInUse returns the context in use: the projection of the next request
// (system prompt, tools and the current, possibly compacted, history).
func (ss *Session) ContextInUse(ctx context.Context) (ContextUse, error) {
	req, _, _, err := ss.build(ctx)
	if err != nil {
		return ContextUse{}, err
	}
	tokens, source := ss.project(req)
	return ContextUse{Tokens: tokens, Window: int(ss.model.ContextWindow), Source: source}, nil
}

// project returns the meter's projection of req, or bytes/4 without a meter.
func (ss *Session) project(req llm.Request) (int, string) {
	m, ok := core.Lookup(ss.svc.c, tokenmeter.Key)
	if !ok {
		n := 0
		for _, msg := range req.Messages {
			n += (len(msg.Content)+len(msg.Reasoning))/4 + 4
			for _, tc := range msg.ToolCalls {
				n += len(tc.Arguments)/4 + 4
			}
		}
		return n, string(tokenmeter.SourceEstimated)
	}
	s := m.Session(ss.id)
	if ss.model.ContextWindow > 0 {
		s.SetContextWindow(int(ss.model.ContextWindow))
	}
	mreq := meterRequest(req)
	mreq.Model = ss.model.Name
	p := s.Project(mreq)
	return p.Tokens, string(p.Source)
}

// projectHistory projects a request with the current prompt and tools and
// the given history.
func (ss *Session) projectHistory(ctx context.Context, hist []llm.Message) int {
	req, _, _, err := ss.build(ctx)
	if err != nil {
		return 0
	}
	msgs := req.Messages[:0:0]
	if len(req.Messages) > 0 && req.Messages[0].Role == llm.RoleSystem {
		msgs = append(msgs, req.Messages[0])
	}
	req.Messages = append(msgs, hist...)
	n, _ := ss.project(req)
	return n
}

// isContextLength reports whether err is the provider's context-length error.
func isContextLength(err error) bool {
	le, ok := llm.AsError(err)
	return ok && le.Code == llm.CodeContextLength
}

package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/sessions"
)

// opening is a session being opened by [Service.Open], one step at a time:
// defaults, the stored session (resume or fork), the model, the log, the
// session with its scope, then the start. A failing step's error is
// returned after abort undid what the earlier steps acquired (the log's
// hold, the scope); nothing is written before the start.
type opening struct {
	svc        *Service
	o          Options
	resumed    bool
	fromConfig []string // options the agent row supplied, for the error
	journal    *sessions.Writer
	recs       []Record // the stored records to replay
	copied     []Record // a fork's records, stored with its first kept record
	model      llm.Model
	logged     string // the route the log records (an alias stays an alias)
	ss         *Session
}

// defaults checks that the tools are offered and fills the options the
// caller left to the agent row: working directory, max steps, thinking and
// reasoning effort.
func (op *opening) defaults(context.Context) error {
	s, o := op.svc, &op.o
	if err := s.toolsOffered(nil); err != nil {
		return err
	}
	if o.ID != "" && o.Fork != "" {
		return fmt.Errorf("session options: ID %s and Fork %s are mutually exclusive", o.ID, o.Fork)
	}
	if o.NewID != "" && (o.ID != "" || o.Fork != "" || !ValidSessionID(o.NewID)) {
		return fmt.Errorf("session options: NewID %q must be a valid session id and excludes ID and Fork", o.NewID)
	}
	if o.Cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("working directory: %w", err)
		}
		o.Cwd = wd
	}
	if o.MaxSteps <= 0 {
		o.MaxSteps = s.cfg.MaxSteps
	}
	if o.Thinking == llm.ThinkingDefault && s.cfg.Thinking != llm.ThinkingDefault {
		o.Thinking = s.cfg.Thinking
		op.fromConfig = append(op.fromConfig, "thinking: "+string(s.cfg.Thinking))
	}
	if o.ReasoningEffort == "" && s.cfg.ReasoningEffort != "" {
		o.ReasoningEffort = s.cfg.ReasoningEffort
		op.fromConfig = append(op.fromConfig, "reasoningEffort: "+s.cfg.ReasoningEffort)
	}
	return nil
}

// resume opens the stored session Options.ID (held until Close) and reads
// its records; its model is the default route.
func (op *opening) resume(ctx context.Context) error {
	if !op.resumed {
		return nil
	}
	s, o := op.svc, &op.o
	journal, stored, err := s.sessions.Open(ctx, o.ID)
	if err != nil {
		return err
	}
	op.journal = journal
	if op.recs, err = DecodeRecords(stored); err != nil {
		return fmt.Errorf("session %s (%s): %w", o.ID, s.sessions.Location(o.ID), err)
	}
	if o.Model == "" {
		o.Model = journal.Header().Model
	}
	return nil
}

// fork reads the session Options.Fork (only read) as the new session's
// history; its model is the default route.
func (op *opening) fork(ctx context.Context) error {
	o := &op.o
	if o.Fork == "" {
		return nil
	}
	src, err := ReadSession(ctx, op.svc.sessions, o.Fork)
	if err != nil {
		return fmt.Errorf("--fork: %w", err)
	}
	if o.Model == "" && len(src) > 0 {
		o.Model = src[0].Model
	}
	src = trimUnresolved(src)
	if len(src) > 0 {
		op.recs, op.copied = src, src[1:]
	}
	return nil
}

// resolveModel resolves the route and checks that the model can honour
// Thinking and ReasoningEffort, naming the agent row when it supplied them.
func (op *opening) resolveModel(context.Context) error {
	o := &op.o
	route := cmp.Or(o.Model, op.svc.cfg.Model)
	model, err := op.svc.llm.Resolve(route)
	if err != nil {
		return err
	}
	op.model, op.logged = model, model.Route()
	if _, name, _ := llm.SplitRoute(route); name != "" && name != model.Name {
		// An alias: it may fix options (deepseek-chat: thinking disabled).
		// They are carried in the session's options, since requests name
		// the canonical model, and the log keeps the alias for a resume.
		op.logged = model.Provider + "/" + name
		if o.Thinking == llm.ThinkingDefault {
			o.Thinking = model.Thinking
		}
	}
	if _, err := llm.EffectiveOptions(model, llm.Options{Thinking: o.Thinking, ReasoningEffort: o.ReasoningEffort}); err != nil {
		if len(op.fromConfig) > 0 {
			return fmt.Errorf("%w (the agent row of harness.yml sets %s)", err, strings.Join(op.fromConfig, ", "))
		}
		return err
	}
	return nil
}

// checkBudget checks the session's budget (Options.Budget over the agent
// row's): valid caps, and prices for a cost cap.
func (op *opening) checkBudget(context.Context) error {
	if is := op.o.Budget.issues("Options.Budget."); len(is) > 0 {
		return &core.ConfigError{Issues: is}
	}
	field := "the agent row's budget.maxCostUsd"
	if op.o.Budget.MaxCostUSD != 0 {
		field = "the session's budget maxCostUsd"
	}
	return checkPriced(op.svc.cfg.Budget.over(op.o.Budget), op.model, field)
}

// reserve gives a new session its id and reserves its log (created by the
// first kept record).
func (op *opening) reserve(context.Context) error {
	if op.resumed {
		return nil
	}
	o := &op.o
	o.ID = o.NewID
	if o.ID == "" {
		o.ID = NewSessionID(time.Now())
	}
	h := sessions.Header{ID: o.ID, Cwd: o.Cwd, Model: op.logged, Time: time.Now().UTC()}
	h.Parent, h.Origin = o.Parent, o.Origin
	if o.Fork != "" {
		h.Parent, h.Origin = o.Fork, cmp.Or(o.Origin, "fork")
	}
	journal, err := op.svc.sessions.Reserve(h)
	if err != nil {
		return err
	}
	op.journal = journal
	return nil
}

// newSession mints the session's scope, replays the stored records and
// registers the session's prompt variables and listeners in its scope.
func (op *opening) newSession(context.Context) error {
	s, o := op.svc, op.o
	sc, err := core.NewScope(s.c, core.NewScopeID("session:"+o.ID, o.ParentScope))
	if err != nil {
		return err
	}
	ss := &Session{svc: s, id: o.ID, scope: sc, journal: op.journal, copied: op.copied, opts: o, model: op.model, route: op.model.Route()}
	ss.budget.caps = s.cfg.Budget.over(o.Budget)
	op.ss = ss
	ss.claude = &claudeTranscript{path: claudeTranscriptFor(s.sessions.Location(o.ID), o.ID), sessionID: o.ID, cwd: o.Cwd}
	ss.replay(op.recs)
	return ss.registerScoped()
}

// start announces the session (EventSession) and runs SessionStart.
func (op *opening) start(ctx context.Context) *Session {
	ss := op.ss
	source := "startup"
	if op.resumed {
		source = "resume"
	}
	ss.observe(Event{Type: EventSession, Cwd: op.o.Cwd, Model: ss.route, Resumed: op.resumed})
	ss.pending, ss.env = ss.sessionStart(ctx, source)
	return ss
}

// abort undoes a failed opening: the session's scope and the log's hold.
func (op *opening) abort() {
	if op.ss != nil {
		_ = op.ss.Close(context.Background())
		return
	}
	if op.journal != nil {
		_ = op.journal.Close()
	}
}

// replay restores the session's state from its stored records: history,
// last runtime-context snapshot, turn count, usage total, the budget's
// spend (every usage record, estimated ones included) and states.
func (ss *Session) replay(recs []Record) {
	ss.history, ss.turnStart = replayView(recs)
	ss.interrupted = interruptedResults(recs)
	for _, r := range recs {
		ss.replayPrefix(r)
		if r.Type == RecordRewind {
			ss.lastSnapshot = "" // the snapshot may have been cut away: send it again
		}
		if r.Type == RecordUser && r.Source == SourceRuntimeContext && r.Message != nil {
			ss.lastSnapshot = r.Message.Content
		}
		if r.Type == RecordCompaction {
			ss.lastSnapshot = "" // re-sent after a compaction, as live
		}
		if r.Type == RecordUser && r.Source == "" {
			ss.turn = max(ss.turn, r.Turn)
		}
		if r.Type == RecordUsage && r.Usage != nil && !r.Estimated {
			ss.total = ss.total.Add(*r.Usage)
		}
		if r.Type == RecordUsage && r.Usage != nil {
			ss.budget.spendLocked(*r.Usage, ss.model.Prices)
		}
		if r.Type == RecordState && r.Key != "" {
			if ss.states == nil {
				ss.states = map[string]json.RawMessage{}
			}
			ss.states[r.Key] = r.State
		}
	}
}

package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/agent"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/tools"
)

// Bounds on one live session.
const (
	maxFrames   = 20000 // events kept for replay to new watchers (deltas are dropped once their message is complete)
	subBuffer   = 1024  // events a slow watcher may lag before it is dropped (it reconnects and catches up)
	maxQueue    = 32    // prompts waiting for the running turn
	maxPromptSz = 256 << 10
)

// frame is one encoded event with its sequence number (the SSE id is
// EPOCH.SEQ, EPOCH naming the live session instance).
type frame struct {
	seq   int64
	delta bool   // a text or reasoning delta
	call  string // a running call's progress: the call's id (superseded by its next progress and its result)
	data  []byte
}

// hub owns the live sessions of a server.
type hub struct {
	s *Server

	mu     sync.Mutex
	live   map[string]*live
	closed bool
	base   context.Context // parent of every turn; cancelled by closeAll
	cancel context.CancelFunc
	turns  sync.WaitGroup
	idle   time.Duration  // close a session unwatched and idle this long (0: never)
	closes sync.WaitGroup // idle closes under way
}

func newHub(s *Server) *hub {
	ctx, cancel := context.WithCancel(context.Background())
	return &hub{s: s, live: map[string]*live{}, base: ctx, cancel: cancel, idle: s.cfg.IdleClose.D()}
}

// live is one open session: the agent session, the events for watchers,
// the running turn and its queue, and the pending approvals. A read-only
// live (readOnly set) has no agent session: it shows a session's log, and
// a subagent's events as its parent relays them (child).
type live struct {
	h     *hub
	id    string
	cwd   string
	svc   *agent.Service
	epoch string

	// readOnly says why the session takes no input ("" for a session
	// this server runs); child marks a subagent's session whose live
	// events come from its parent's.
	readOnly string
	child    bool

	ss      *agent.Session
	unroute func()

	mu        sync.Mutex
	seq       int64
	buf       []frame
	subs      map[*sub]struct{}
	running   bool
	rewinding bool // a conversation rewind rebuilds the backlog: prompts are refused meanwhile
	cancel    context.CancelFunc
	queue     []string
	approvals map[string]chan answer
	shown     map[string]Approval
	closed    bool
	lastUsed  time.Time
	idleT     *time.Timer
	idleGen   int

	// The footer's figures: the model (once the agent session is open)
	// and what the usage and compaction events said.
	model   *llm.Model
	figures Figures
}

// sub is one watcher (an SSE stream).
type sub struct {
	ch      chan frame
	dropped bool
}

type answer struct {
	outcome tools.ApprovalOutcome
	reason  string
}

// agentService returns the active agent service.
func (h *hub) agentService() (*agent.Service, error) {
	svc, ok := core.Lookup(h.s.c, agent.Key)
	if !ok {
		return nil, errors.New("the agent plugin is not active (see `harness plugins`)")
	}
	return svc, nil
}

// get returns the live session id, or nil.
func (h *hub) get(id string) *live {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.live[id]
}

// open returns the live session id, resuming it from its log (whose events
// seed the replay) when it is not open. A live session opened on an agent
// service that a reload has replaced is reopened on the new one when idle.
// A subagent's session, and a session another process holds, open
// read-only: the log replayed, no input (a running child's events follow
// live through its parent). A read-only view of a session held elsewhere
// is made again when nobody watches it, so the session opens for input
// once that process lets it go.
func (h *hub) open(ctx context.Context, id, cwd string) (*live, error) {
	svc, err := h.agentService()
	if err != nil {
		return nil, err
	}
	if l := h.get(id); l != nil {
		switch {
		case l.child:
			return l, nil
		case l.readOnly != "":
			if l.svc == svc && l.watchers() > 0 {
				return l, nil
			}
		case l.svc == svc || l.busy():
			return l, nil
		}
		h.drop(l)
	}
	recs, err := agent.ReadSession(ctx, svc.Sessions(), id)
	if err != nil {
		return nil, err
	}
	if len(recs) > 0 && recs[0].Origin == subagentOrigin {
		return h.readOnly(ctx, svc, id, cwd, recs, childReadOnly, true), nil
	}
	l := h.newLive(svc, cwd)
	h.replay(ctx, l, id, recs)
	nl, err := h.start(ctx, l, agent.Options{ID: id, Cwd: cwd})
	if errors.Is(err, agent.ErrSessionInUse) {
		return h.readOnly(ctx, svc, id, cwd, recs, "open in another process: read-only here until that process closes it", false), nil
	}
	return nl, err
}

// watchers counts l's event streams.
func (l *live) watchers() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.subs)
}

// create opens a new session (or a fork of fork) in cwd.
func (h *hub) create(ctx context.Context, cwd, fork string) (*live, error) {
	svc, err := h.agentService()
	if err != nil {
		return nil, err
	}
	l := h.newLive(svc, cwd)
	if fork != "" {
		recs, err := agent.ReadSession(ctx, svc.Sessions(), fork)
		if err != nil {
			return nil, err
		}
		for _, e := range eventsOfRecords("", visibleRecords(recs[min(1, len(recs)):])) {
			l.publishAgent(e)
		}
	}
	return h.start(ctx, l, agent.Options{Cwd: cwd, Fork: fork})
}

func (h *hub) newLive(svc *agent.Service, cwd string) *live {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return &live{h: h, svc: svc, cwd: cwd, epoch: hex.EncodeToString(b[:]), subs: map[*sub]struct{}{},
		approvals: map[string]chan answer{}, shown: map[string]Approval{}, lastUsed: time.Now()}
}

// start opens the agent session of l, routes its approvals here and
// registers it.
func (h *hub) start(ctx context.Context, l *live, o agent.Options) (*live, error) {
	o.Observer = l.publishAgent
	ss, err := l.svc.Open(ctx, o)
	if err != nil {
		return nil, err
	}
	l.ss, l.id = ss, ss.ID()
	m := ss.Model()
	l.mu.Lock()
	l.model = &m
	l.mu.Unlock()
	if r, ok := core.Lookup(h.s.c, tools.ApprovalKey); ok {
		if router, ok := r.(interface {
			Route(*core.ScopeID, tools.Answerer) func()
		}); ok {
			l.unroute = router.Route(ss.Scope(), l)
		}
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		l.close()
		return nil, errors.New("the web server is stopping")
	}
	if old := h.live[l.id]; old != nil {
		h.mu.Unlock()
		l.close()
		return old, nil
	}
	h.live[l.id] = l
	h.mu.Unlock()
	l.mu.Lock()
	// A session just opened waits for its first watcher at least
	// openGrace: one created and not yet written has no log to reopen
	// it from, and a page on a loaded machine may take longer than
	// idleClose to connect.
	l.armIdleForLocked(max(l.h.idle, openGrace))
	l.mu.Unlock()
	l.publishFigures()
	return l, nil
}

// drop closes l and forgets it.
func (h *hub) drop(l *live) {
	h.mu.Lock()
	if h.live[l.id] == l {
		delete(h.live, l.id)
	}
	h.mu.Unlock()
	l.close()
}

// closeAll cancels every turn, waits for them and closes every session
// (the plugin's disposer).
func (h *hub) closeAll() {
	h.mu.Lock()
	h.closed = true
	all := make([]*live, 0, len(h.live))
	for _, l := range h.live {
		all = append(all, l)
	}
	h.live = map[string]*live{}
	h.mu.Unlock()
	h.cancel()
	h.turns.Wait()
	h.closes.Wait()
	for _, l := range all {
		l.close()
	}
}

// close ends the watchers, withdraws the approval route and closes the
// agent session (a running turn must have been cancelled and awaited).
func (l *live) close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	l.disarmLocked()
	if l.cancel != nil {
		l.cancel()
	}
	for s := range l.subs {
		close(s.ch)
	}
	l.subs = map[*sub]struct{}{}
	l.mu.Unlock()
	if l.unroute != nil {
		l.unroute()
	}
	if l.ss != nil {
		_ = l.ss.Close(context.Background())
	}
}

func (l *live) busy() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running
}

// publishAgent records and fans out one agent event. A complete assistant
// message replaces the deltas that built it in the backlog. A subagent's
// event relayed to this session goes to the child's own (read-only) live
// session instead: its deltas must not join (or clear) this one's.
func (l *live) publishAgent(e agent.Event) {
	if e.Depth > 0 && e.SessionID != "" && e.SessionID != l.id {
		l.h.relayChild(l, e)
		return
	}
	if e.SessionID == "" {
		e.SessionID = l.id
	}
	switch e.Type {
	case agent.EventToolProgress:
		// A running call's output so far (up to ten a second per call):
		// the backlog keeps the latest of each running call only.
		if e.ToolProgress != nil {
			l.publishProgress(e.ToolProgress.CallID, encodeAgentEvent(e))
		}
		return
	case agent.EventToolResult:
		if e.ToolResult != nil {
			l.mu.Lock()
			l.buf = slices.DeleteFunc(l.buf, func(f frame) bool { return f.call == e.ToolResult.CallID })
			l.mu.Unlock()
		}
	case agent.EventAssistant:
		l.mu.Lock()
		l.buf = slices.DeleteFunc(l.buf, func(f frame) bool { return f.delta })
		l.mu.Unlock()
	}
	delta := e.Type == agent.EventText || e.Type == agent.EventReasoning
	l.publish(encodeAgentEvent(e), delta)
	switch e.Type {
	case agent.EventAssistant:
		if e.Message != nil {
			if h, ok := markdown()(e.Message.Content); ok {
				l.publishWeb(webEvent{Type: EventMarkdown, HTML: h})
			}
		}
	case agent.EventUsage:
		l.mu.Lock()
		if e.ContextTokens > 0 {
			l.figures.ContextTokens = e.ContextTokens
		}
		if e.Total != nil {
			l.figures.Total = *e.Total
		}
		l.figures.Estimated = e.Estimated
		l.mu.Unlock()
		l.publishFigures()
	case agent.EventCompaction:
		if e.Compaction != nil {
			l.mu.Lock()
			l.figures.ContextTokens = int64(e.Compaction.TokensAfter)
			l.mu.Unlock()
			l.publishFigures()
		}
	}
}

// publishFigures sends the footer's figures, once the model is known.
func (l *live) publishFigures() {
	l.mu.Lock()
	if l.model == nil {
		l.mu.Unlock()
		return
	}
	f := l.figures
	f.Model, f.ContextWindow = l.model.Route(), l.model.ContextWindow
	if p := l.model.Prices; p.Known() {
		c := p.Cost(f.Total)
		f.Cost = &c
	}
	l.mu.Unlock()
	l.publishWeb(webEvent{Type: EventFigures, Figures: &f})
}

// publishProgress is publish for the progress of call: it replaces the
// call's earlier progress in the backlog.
func (l *live) publishProgress(call string, data []byte) {
	l.mu.Lock()
	l.buf = slices.DeleteFunc(l.buf, func(f frame) bool { return f.call == call })
	l.mu.Unlock()
	l.publishFrame(data, false, call)
}

func (l *live) publishWeb(e webEvent) {
	e.SessionID = l.id
	l.publish(encodeWebEvent(e), false)
}

// publish appends data to the backlog (bounded: the oldest frames go) and
// sends it to every watcher; a watcher whose buffer is full is dropped.
func (l *live) publish(data []byte, delta bool) { l.publishFrame(data, delta, "") }

func (l *live) publishFrame(data []byte, delta bool, call string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	f := frame{seq: l.seq, delta: delta, call: call, data: data}
	l.buf = append(l.buf, f)
	if len(l.buf) > maxFrames {
		l.buf = slices.Delete(l.buf, 0, len(l.buf)-maxFrames)
	}
	for s := range l.subs {
		select {
		case s.ch <- f:
		default:
			s.dropped = true
			close(s.ch)
			delete(l.subs, s)
		}
	}
}

// subscribe returns the backlog after seq `after` of epoch (all of it,
// preceded by a reset, when events after it were dropped or the id names
// another instance of the session) and a watcher for what follows.
func (l *live) subscribe(epoch string, after int64) (backlog []frame, s *sub, reset bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lastUsed = time.Now()
	s = &sub{ch: make(chan frame, subBuffer)}
	if l.closed {
		close(s.ch)
		return nil, s, false
	}
	l.disarmLocked()
	first := int64(1)
	if len(l.buf) > 0 {
		first = l.buf[0].seq
	}
	if after > l.seq || (after > 0 && after < first-1) || (after > 0 && epoch != l.epoch) {
		after, reset = 0, true
	}
	for _, f := range l.buf {
		if f.seq > after {
			backlog = append(backlog, f)
		}
	}
	l.subs[s] = struct{}{}
	return backlog, s, reset
}

func (l *live) unsubscribe(s *sub) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.subs[s]; ok {
		delete(l.subs, s)
		close(s.ch)
	}
	l.lastUsed = time.Now()
	l.armIdleLocked()
}

// ErrQueueFull: too many prompts wait for the running turn.
var ErrQueueFull = errors.New("the prompt queue is full")

// ErrReadOnly: the session is shown read-only here (a subagent's session,
// or one another process holds) and takes no input.
var ErrReadOnly = errors.New("the session is read-only here")

// armIdleLocked (l.mu held) starts the idle timer when nothing keeps the
// session open: no watcher, no running turn (a pending approval belongs
// to a running turn). When it fires the session is closed (its exclusive
// hold released); opening it again resumes it from its log.
func (l *live) armIdleLocked() { l.armIdleForLocked(l.h.idle) }

// openGrace is the least time a session just opened stays open unwatched.
const openGrace = 10 * time.Second

// armIdleForLocked is armIdleLocked with the timer set to d (idleClose
// unset: never).
func (l *live) armIdleForLocked(d time.Duration) {
	if l.h.idle <= 0 || l.closed || l.running || len(l.subs) > 0 {
		return
	}
	l.disarmLocked()
	gen := l.idleGen
	l.idleT = time.AfterFunc(d, func() { l.h.closeIdle(l, gen) })
}

// disarmLocked (l.mu held) stops the idle timer.
func (l *live) disarmLocked() {
	l.idleGen++
	if l.idleT != nil {
		l.idleT.Stop()
		l.idleT = nil
	}
}

// closeIdle closes l if its idle timer gen is still the current one and it
// is still unwatched and idle.
func (h *hub) closeIdle(l *live, gen int) {
	h.mu.Lock()
	if h.closed || h.live[l.id] != l {
		h.mu.Unlock()
		return
	}
	l.mu.Lock()
	idle := gen == l.idleGen && !l.closed && !l.running && len(l.subs) == 0
	l.mu.Unlock()
	if !idle {
		h.mu.Unlock()
		return
	}
	delete(h.live, l.id)
	h.closes.Add(1)
	h.mu.Unlock()
	defer h.closes.Done()
	l.close()
}

// prompt runs text now, or queues it behind the running turn (queued true).
func (l *live) prompt(text string) (queued bool, err error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return false, errors.New("the session is closed")
	}
	if l.readOnly != "" {
		l.mu.Unlock()
		return false, fmt.Errorf("%w: %s", ErrReadOnly, l.readOnly)
	}
	if l.rewinding {
		l.mu.Unlock()
		return false, errors.New("the conversation is being rewound: send the prompt again in a moment")
	}
	if l.running {
		if len(l.queue) >= maxQueue {
			l.mu.Unlock()
			return false, ErrQueueFull
		}
		l.queue = append(l.queue, text)
		q := slices.Clone(l.queue)
		l.mu.Unlock()
		l.publishWeb(webEvent{Type: EventQueue, Queue: q})
		return true, nil
	}
	l.running = true
	l.disarmLocked()
	l.mu.Unlock()
	h := l.h
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return false, errors.New("the web server is stopping")
	}
	h.turns.Add(1)
	h.mu.Unlock()
	go l.runTurns(text)
	return false, nil
}

// runTurns runs text and then every queued prompt, one turn at a time.
func (l *live) runTurns(text string) {
	defer l.h.turns.Done()
	l.publishWeb(webEvent{Type: EventBusy, Busy: true})
	for {
		l.runOne(text)
		l.mu.Lock()
		if len(l.queue) == 0 || l.closed {
			l.running, l.cancel = false, nil
			l.lastUsed = time.Now()
			l.armIdleLocked()
			l.mu.Unlock()
			break
		}
		text = l.queue[0]
		l.queue = l.queue[1:]
		q := slices.Clone(l.queue)
		l.mu.Unlock()
		l.publishWeb(webEvent{Type: EventQueue, Queue: q})
	}
	l.publishWeb(webEvent{Type: EventBusy, Busy: false})
}

// runOne runs one turn; a failure before any event (a configuration error)
// and a panic become notices.
func (l *live) runOne(text string) {
	ctx, cancel := context.WithCancel(l.h.base)
	defer cancel()
	l.mu.Lock()
	l.cancel = cancel
	l.mu.Unlock()
	defer func() {
		if v := recover(); v != nil {
			l.h.s.c.Logger().Error("web: turn panicked", "session", l.id, "panic", v, "stack", string(debug.Stack()))
			l.publishAgent(agent.Event{Type: agent.EventNotice, Text: fmt.Sprintf("the turn failed: %v", v)})
		}
	}()
	_, err := l.ss.Run(ctx, text)
	if err != nil && agent.IsConfigError(err) {
		l.publishAgent(agent.Event{Type: agent.EventNotice, Text: "the turn did not start: " + err.Error()})
	}
}

// interrupt cancels the running turn and drops the queue. It reports
// whether a turn was running.
func (l *live) interrupt() bool {
	l.mu.Lock()
	running, cancel := l.running, l.cancel
	hadQueue := len(l.queue) > 0
	l.queue = nil
	l.mu.Unlock()
	if hadQueue {
		l.publishWeb(webEvent{Type: EventQueue, Queue: []string{}})
	}
	if cancel != nil {
		cancel()
	}
	return running
}

// Answer is AnswerDetailed without the reason.
func (l *live) Answer(ctx context.Context, req tools.ApprovalRequest) (tools.ApprovalOutcome, error) {
	a, err := l.AnswerDetailed(ctx, req)
	return a.Outcome, err
}

// AnswerDetailed puts an approval request to the browser: it is shown to
// every watcher (and to any that connects later) until answered, withdrawn
// by ctx, or the session closes. A denial's reason goes back to the model.
func (l *live) AnswerDetailed(ctx context.Context, req tools.ApprovalRequest) (tools.ApprovalAnswer, error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	reason := req.DisplayReason
	if reason == "" {
		reason = req.Reason
	}
	a := Approval{ID: id, Tool: req.Tool, CallID: req.CallID, Arguments: req.Arguments, Reason: reason,
		Always: "this exact call, for the rest of this session", AlwaysRules: req.AlwaysRules, Labels: req.Labels}
	if len(req.AlwaysRules) > 0 {
		a.Always = strings.Join(req.AlwaysRules, ", ")
	}
	ch := make(chan answer, 1)
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return tools.ApprovalAnswer{Outcome: tools.ApprovalCancelled}, nil
	}
	l.approvals[id], l.shown[id] = ch, a
	l.mu.Unlock()
	l.publishWeb(webEvent{Type: EventApproval, Approval: &a})
	var got answer
	select {
	case got = <-ch:
	case <-ctx.Done():
		got = answer{outcome: tools.ApprovalCancelled}
	}
	l.mu.Lock()
	delete(l.approvals, id)
	delete(l.shown, id)
	l.mu.Unlock()
	l.publishWeb(webEvent{Type: EventApprovalDone, Approval: &Approval{ID: id, Tool: a.Tool, CallID: a.CallID}, Answer: got.outcome.String(), Reason: got.reason})
	return tools.ApprovalAnswer{Outcome: got.outcome, Reason: got.reason}, nil
}

// answer resolves pending approval id; false when there is none.
func (l *live) answer(id string, a answer) bool {
	l.mu.Lock()
	ch, ok := l.approvals[id]
	delete(l.approvals, id)
	l.mu.Unlock()
	if ok {
		ch <- a
	}
	return ok
}

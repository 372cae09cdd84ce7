package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/agent/lifecycle"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/systemprompt"
)

// Errors a turn can end with (besides *llm.Error from the model and the
// context's error on cancellation).
var (
	// ErrMaxSteps: the turn made MaxSteps model calls without finishing.
	ErrMaxSteps = errors.New("maximum number of steps reached")
	// ErrPromptBlocked: a UserPromptSubmit listener rejected the prompt.
	ErrPromptBlocked = errors.New("prompt blocked")
	// ErrBusy: a turn is already running in this session.
	ErrBusy = errors.New("a turn is already running in this session")
)

// Sources of plugin-authored user messages.
const (
	SourceRuntimeContext = "systemprompt:runtime-context"
	SourceToolContext    = "tools:additional-context"
)

// AppendSystemPromptSection is the name of the section carrying
// Options.AppendSystemPrompt (order 10300, after the persona suffix).
const AppendSystemPromptSection = "agent:append-system-prompt"

// Options open a session.
type Options struct {
	// ID resumes the stored session with this id; empty starts a new one.
	ID string
	// Fork starts a new session from a copy of the stored session with
	// this id (which is only read: it may be open elsewhere). The copy
	// has the same records, except the header: its parent is Fork, its
	// origin "fork". Exclusive with ID.
	Fork string
	// NewID, when set, is the id of the new session (a valid session id,
	// see [ValidSessionID]) instead of a fresh one: a caller that must
	// find the session again after a crash (a fleet job) names it up
	// front. Storing fails with sessions.ErrExists when the id is taken.
	// Exclusive with ID and Fork.
	NewID string
	// Cwd is the session's working directory (default: the process
	// working directory): reported to the model, and carried by the
	// context of every tool call of the session (services/tools/workdir), so tools
	// that resolve paths with workdir.Or(ctx, configured) (tool-bash,
	// tool-fs, tool-search, and third-party tools written that way) resolve
	// relative paths against it. A tool that ignores the context resolves
	// them against whatever directory it uses itself.
	Cwd string
	// Model is the route; empty uses the plugin's configured model (or,
	// when resuming, the session's stored model).
	Model string
	// Thinking and ReasoningEffort override the configured defaults.
	Thinking        llm.Thinking
	ReasoningEffort string
	// MaxSteps bounds model calls per turn; 0 uses the configured value.
	MaxSteps int
	// AppendSystemPrompt is appended to the system prompt of this session.
	AppendSystemPrompt string
	// Observer receives every event in order on the loop's goroutine
	// (optional). It must not block for long. Calls are serialized: events
	// of child sessions relayed to this one ([Session.Relay]) never
	// overlap the session's own.
	Observer func(Event)

	// Parent and Origin are stored in a new session's header (a subagent:
	// the parent session's id and "subagent"). With Fork, Origin replaces
	// "fork" and Parent is ignored (the forked session is the parent).
	Parent, Origin string
	// ParentScope makes the session's scope a child of this scope, so the
	// parent's scoped listeners, prompt sections and tool restrictions
	// apply to this session too (nil: a top-level scope).
	ParentScope *core.ScopeID
	// Depth is the session's nesting depth: 0 for a top-level session, 1
	// for its children. Events carry it (with the parent's id) when > 0.
	Depth int
	// Budget caps the session's spend; each cap set here replaces the
	// agent row's (Config.Budget). See [Budget].
	Budget Budget
}

// Session is one conversation: a core scope (tools, prompt sections and
// listeners registered through [Session.Context] apply to it alone), a
// history, and its JSONL log. Turns run one at a time.
type Session struct {
	svc   *Service
	id    string
	scope *core.Scope
	opts  Options
	model llm.Model
	route string

	// The log (guarded by wmu). A new session's file is created by its
	// first kept record; a turn's records are held until its first model
	// call got past the route's up-front checks (see [Session.Run]).
	wmu     sync.Mutex
	journal *sessions.Writer // a new session is stored by its first kept record
	claude  *claudeTranscript
	holding bool // records are held, not written
	// gathering: the records of a step are collected in held and written
	// together by flush.
	gathering bool
	copied    []Record // a fork's records, written before its first own record
	held      []Record
	wclosed   bool

	turnMu  sync.Mutex
	running bool

	obsMu sync.Mutex // serializes observer calls (own and relayed events)
	inbox []sourced  // notices added before the next model request

	mu      sync.Mutex
	history []llm.Message
	// turnStart is, per user turn in the history, the index of its prompt
	// (what RewindConversation cuts at); compaction clears it.
	turnStart map[int]int
	// interrupted are the made-up results (see Replay) of the tool calls
	// the stored log left without one; in history already, stored by the
	// next turn (Continue) so that the log says what the model was given.
	interrupted  []llm.Message
	lastSnapshot string
	prefix       prefixState // the recorded request prefix (see prefixState)
	turn         int
	total        llm.Usage
	budget       budgetState
	pending      []sourced         // contexts to add before the next prompt (SessionStart)
	env          map[string]string // variables for the session's shell commands (SessionStart); set before the session is returned, then read only
	states       map[string]json.RawMessage
	closed       bool
}

type sourced struct{ source, text string }

// Open starts a new session or resumes a stored one (Options.ID). The
// returned session must be closed.
//
// Tools registered while nothing offers their schemas to the model (no
// prompt-tools row) would be invisible to a real model, so Open refuses
// with a *[ToolsNotOfferedError] (errors.Is [ErrToolsNotOffered]); each
// request is checked the same way for the session's scope.
//
// Everything that can be known before a request is checked first: the
// route resolves, and the model can honour Thinking and ReasoningEffort
// (an *llm.Error with CodeUnsupportedOption otherwise). A failing check
// returns the error and leaves no trace: no log file for a new session, no
// record appended to a resumed one. A new session's log file is created
// only when its first turn keeps a record (see [Session.Run]), so a
// session that fails its first model call on a configuration error (a
// missing API key) is never stored either.
//
// One session is open once at a time: until Close, the session is held
// exclusively through the sessions service (sessions-jsonl: a claim in
// this process and a lock on its log file, taken when the file is opened
// or when a new session creates it). Opening it again meanwhile, from
// another harness process or in this one, fails at once with a
// [*SessionInUseError] (errors.Is [ErrSessionInUse]) and touches nothing;
// a killed process's hold goes with it.
func (s *Service) Open(ctx context.Context, o Options) (*Session, error) {
	op := &opening{svc: s, o: o, resumed: o.ID != ""}
	for _, step := range []func(context.Context) error{op.defaults, op.resume, op.fork, op.resolveModel, op.checkBudget, op.reserve, op.newSession} {
		if err := step(ctx); err != nil {
			op.abort()
			return nil, err
		}
	}
	return op.start(ctx), nil
}

// registerScoped registers the session's prompt variables and the
// appended system prompt in its scope.
func (ss *Session) registerScoped() error {
	p := ss.svc.prompt
	c := ss.scope.Context()
	vals := map[string]string{"provider": ss.model.Provider, "model": ss.model.Name, "cwd": ss.opts.Cwd, "os": runtime.GOOS}
	for _, name := range []string{"provider", "model", "cwd", "os"} {
		v := vals[name]
		if _, err := p.Variable(c, name, func(context.Context, systemprompt.AssembleContext) (string, bool) { return v, true }); err != nil {
			return err
		}
	}
	if _, err := p.Variable(c, "date", func(context.Context, systemprompt.AssembleContext) (string, bool) {
		return time.Now().Format(time.DateOnly), true
	}); err != nil {
		return err
	}
	if ss.opts.AppendSystemPrompt != "" {
		if _, err := p.Section(c, systemprompt.Section{Name: AppendSystemPromptSection, Order: 10300, Text: ss.opts.AppendSystemPrompt, Interpolate: systemprompt.InterpolateOff}); err != nil {
			return err
		}
	}
	// Messages for the user from policy plugins (a hook's systemMessage)
	// are shown as notices.
	return core.On(c, lifecycle.SystemMessage, func(_ context.Context, n lifecycle.Notice) error {
		ss.observe(Event{Type: EventNotice, Text: n.Text, Source: n.Source})
		return nil
	})
}

// ID returns the session id.
func (ss *Session) ID() string { return ss.id }

// Scope returns the session's scope id (the target of its events).
func (ss *Session) Scope() *core.ScopeID { return ss.scope.ID() }

// Context returns the session's scoped context: what is registered
// through it (tools, prompt sections, listeners) applies to this session
// only and is undone when the session closes.
func (ss *Session) Context() *core.Context { return ss.scope.Context() }

// Model returns the resolved model.
func (ss *Session) Model() llm.Model { return ss.model }

// ModelRoute returns the route of the resolved model ("provider/model"),
// which the system prompt's identity line names; it implements
// systemprompt.ModelRouter.
func (ss *Session) ModelRoute() string { return ss.route }

var _ systemprompt.ModelRouter = (*Session)(nil)

// Cwd returns the session's working directory.
func (ss *Session) Cwd() string { return ss.opts.Cwd }

// LogPath returns where the session is stored (sessions-jsonl: the path
// of its JSONL log). A new session is stored once its first turn kept a
// record (see [Session.Run]).
func (ss *Session) LogPath() string { return ss.svc.sessions.Location(ss.id) }

// History returns a copy of the conversation so far.
func (ss *Session) History() []llm.Message {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return append([]llm.Message(nil), ss.history...)
}

// State returns the current value of a keyed session state (nil when never
// set): the last value set in this session or, after a resume, recorded in
// its log. It implements sessionstate.Store.
func (ss *Session) State(key string) json.RawMessage {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.states[key]
}

// SetState replaces a keyed session state: it appends a state record to the
// log and emits an EventState with the key and the value. value must be
// valid JSON (an error otherwise, and nothing changes).
func (ss *Session) SetState(key string, value json.RawMessage) error {
	if key == "" || !json.Valid(value) {
		return fmt.Errorf("session state %q: want a key and a JSON value", key)
	}
	value = append(json.RawMessage(nil), value...)
	ss.mu.Lock()
	if ss.states == nil {
		ss.states = map[string]json.RawMessage{}
	}
	ss.states[key] = value
	turn := ss.turn
	ss.mu.Unlock()
	err := ss.write(Record{Type: RecordState, Turn: turn, Key: key, State: value})
	ss.observe(Event{Type: EventState, Turn: turn, Key: key, State: value})
	return err
}

// Usage returns the session's summed provider-reported usage.
func (ss *Session) Usage() llm.Usage {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.total
}

// Close fires lifecycle.SessionEnd, then disposes the session's scope (everything registered through it;
// like core's Dispose it does not wait for a goroutine started in the scope
// that has not returned yet) and closes its log. Idempotent; a nil session is closed already (a
// deferred Close after a failed reopen).
func (ss *Session) Close(ctx context.Context) error {
	if ss == nil {
		return nil
	}
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		return nil
	}
	ss.closed = true
	ss.mu.Unlock()
	lifecycle.SessionEnd.Emit(ctx, ss.svc.c.To(ss.scope.ID()), lifecycle.End{Session: ss.lifecycleSession()})
	err := ss.scope.Dispose(ctx)
	ss.wmu.Lock()
	defer ss.wmu.Unlock()
	ss.wclosed = true
	return errors.Join(err, ss.journal.Close()) // releases the session
}

// observe delivers e to the observer and the session scope.
func (ss *Session) observe(e Event) {
	e.SessionID = ss.id
	if ss.opts.Depth > 0 {
		e.Depth, e.ParentID = ss.opts.Depth, ss.opts.Parent
	}
	ss.Relay(e)
	Observed.Emit(context.Background(), ss.svc.c.To(ss.scope.ID()), e)
}

// Relay delivers e, an event of a descendant session (a subagent), to this
// session's observer as it is, serialized with the session's own events.
// It is not logged here nor emitted as [Observed] (the descendant emits it
// to its own scope, which lies within this one).
func (ss *Session) Relay(e Event) {
	if ss.opts.Observer == nil {
		return
	}
	ss.obsMu.Lock()
	defer ss.obsMu.Unlock()
	ss.opts.Observer(e)
}

// Parent returns the id of the session this one descends from ("" for
// none) and its Depth (0: top level).
func (ss *Session) Parent() (id string, depth int) { return ss.opts.Parent, ss.opts.Depth }

// Notify queues text as a user message from source, added to the history
// before the session's next model request (in the running turn, or the
// next one). Subagents use it to tell a parent that a background child
// settled.
func (ss *Session) Notify(source, text string) {
	ss.mu.Lock()
	ss.inbox = append(ss.inbox, sourced{source: source, text: text})
	ss.mu.Unlock()
}

// takeInbox returns and clears the queued notices.
func (ss *Session) takeInbox() []sourced {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	in := ss.inbox
	ss.inbox = nil
	return in
}

// append adds m to the history and the log.
func (ss *Session) append(rec Record) error {
	if rec.Message != nil {
		ss.mu.Lock()
		if rec.Type == RecordUser && rec.Source == "" && rec.Turn > 0 {
			if ss.turnStart == nil {
				ss.turnStart = map[int]int{}
			}
			if _, seen := ss.turnStart[rec.Turn]; !seen {
				ss.turnStart[rec.Turn] = len(ss.history)
			}
		}
		ss.history = append(ss.history, *rec.Message)
		ss.mu.Unlock()
	}
	return ss.write(rec)
}

// write logs rec, or holds it while the running turn holds its records
// or the step gathers them.
func (ss *Session) write(rec Record) error {
	ss.wmu.Lock()
	defer ss.wmu.Unlock()
	ss.claude.add(rec, ss.svc.c.Logger().Warn)
	if ss.holding || ss.gathering {
		if rec.Time.IsZero() {
			rec.Time = time.Now().UTC()
		}
		ss.held = append(ss.held, rec)
		return nil
	}
	return ss.writeLocked([]Record{rec})
}

// writeLocked appends recs to the log in one batch (after the records
// copied from a forked session); a new session is stored (its header
// first) by its first record. ss.wmu is held.
func (ss *Session) writeLocked(recs []Record) error {
	if ss.wclosed {
		return errors.New("session log is closed")
	}
	recs = slices.Concat(ss.copied, recs)
	es := make([]sessions.Entry, 0, len(recs))
	for _, rec := range recs {
		e, err := rec.Entry()
		if err != nil {
			return err
		}
		es = append(es, e)
	}
	if _, err := ss.journal.AppendBatch(context.Background(), es); err != nil {
		return err
	}
	ss.copied = nil
	return nil
}

// hold starts holding records (the start of a turn).
func (ss *Session) hold() {
	ss.wmu.Lock()
	ss.holding = true
	ss.claude.mark()
	ss.wmu.Unlock()
}

// release writes the held records, in one batch, and stops holding.
// Without held records nothing is written (a new session's file is not
// created).
func (ss *Session) release() error {
	ss.wmu.Lock()
	defer ss.wmu.Unlock()
	if !ss.holding {
		return nil
	}
	held := ss.held
	ss.holding, ss.held = false, nil
	if len(held) == 0 {
		return nil
	}
	return ss.writeLocked(held)
}

// gather starts collecting the records of a step, written together by
// flush (one round trip on sessions-postgres). Inside a held turn start
// it changes nothing: the held records are written by release.
func (ss *Session) gather() {
	ss.wmu.Lock()
	ss.gathering = !ss.holding
	ss.wmu.Unlock()
}

// flush writes the gathered records in one batch and stops gathering;
// without gathered records it writes nothing. The agent flushes before
// anything that must find them stored runs (a tool body, the next model
// call, the end of the turn).
func (ss *Session) flush() error {
	ss.wmu.Lock()
	defer ss.wmu.Unlock()
	if !ss.gathering {
		return nil
	}
	recs := ss.held
	ss.gathering, ss.held = false, nil
	if len(recs) == 0 {
		return nil
	}
	return ss.writeLocked(recs)
}

// drop discards the held records and stops holding.
func (ss *Session) drop() {
	ss.wmu.Lock()
	ss.holding, ss.held = false, nil
	ss.claude.rollback()
	ss.wmu.Unlock()
}

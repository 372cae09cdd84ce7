package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/sessions"
	"github.com/dshgo/harness/services/systemprompt"
	"github.com/dshgo/harness/services/tools"
)

// JournalVersion is the version of the session log format, carried by the
// header record.
const JournalVersion = sessions.FormatVersion

// Record types of the session log.
const (
	RecordSession    = sessions.TypeHeader // header: id, cwd, model, parent, origin, time (seq 1)
	RecordUser       = "user"              // a user message (the prompt, or plugin-sourced context when Source is set)
	RecordAssistant  = "assistant"         // the assistant message of one step: text, reasoning, tool calls
	RecordToolCall   = "tool/call"         // a tool call about to run: callId, name, raw arguments
	RecordToolResult = "tool/result"       // its result: the tool message, isError, error info, meta
	RecordUsage      = "usage"             // provider-reported (or estimated) usage of one model call
	RecordCompaction = "compaction"        // the history before it was summarized: message (the summary), kept, summarized, trigger
	RecordError      = "error"             // a model call that failed: code and failure text (no message)
	RecordState      = "state"             // a plugin's keyed session state (key, state), e.g. the todo list; the last value of a key wins
	RecordPrefix     = "prefix"            // the request prefix the session replays: system prompt, its sections and the tool list; the last one wins
	RecordRewind     = "rewind"            // the conversation goes back to before user turn Turn (its prompt and all after it leave the history; the records stay in the log)
)

// Record is one record of a session log, stored through the sessions
// service (one line of a JSONL log). Type says which fields are set.
// Records with a Message rebuild the conversation on replay, in order.
type Record struct {
	Type string    `json:"type,omitzero"`
	Seq  int64     `json:"seq,omitzero"`
	Time time.Time `json:"time,omitzero"`

	// Header fields (RecordSession).
	V      int    `json:"v,omitempty"`
	ID     string `json:"id,omitempty"`
	Cwd    string `json:"cwd,omitempty"`
	Model  string `json:"model,omitempty"`
	Parent string `json:"parent,omitempty"`
	Origin string `json:"origin,omitempty"`

	// Turn is the 1-based user turn, Step the 1-based model call within it.
	Turn int `json:"turn,omitempty"`
	Step int `json:"step,omitempty"`

	// Message is the conversation entry (user, assistant, tool/result).
	Message *llm.Message `json:"message,omitempty"`
	// Source names the plugin that authored a user message that did not
	// come from the user (runtime context, additional contexts, hooks).
	Source string `json:"source,omitempty"`
	// Aborted marks an assistant message cut short by cancellation or by
	// a failed stream (then a RecordError follows it).
	Aborted bool `json:"aborted,omitempty"`

	// Failure fields (RecordError): the llm error code ("SERVER") and the
	// whole error text ("SERVER (HTTP 500): boom").
	Code    string `json:"code,omitempty"`
	Failure string `json:"failure,omitempty"`

	// Tool call and result fields. The canonical tool value is never
	// persisted (dsh A13): replay reproduces what the model saw.
	CallID    string           `json:"callId,omitempty"`
	Name      string           `json:"name,omitempty"`
	Arguments string           `json:"arguments,omitempty"`
	Content   []tools.Content  `json:"content,omitempty"`
	IsError   bool             `json:"isError,omitempty"`
	Error     *tools.ErrorInfo `json:"error,omitempty"`
	Meta      json.RawMessage  `json:"meta,omitempty"`
	// Presentation is a tool/result's final presentation without its
	// content and raw input or output (Content is what the model saw; an
	// edit's whole-file texts would double the log): its status (a command
	// that timed out, was killed or exited non-zero is "failed" although
	// IsError, what the model was told, is false), the failure's reason or
	// the result's summary, its kind, title and locations. Logs written
	// before it existed have none.
	Presentation *tools.Presentation `json:"presentation,omitempty"`

	// Compaction fields (RecordCompaction): Message is the summary (a user
	// message), Kept the number of messages at the end of the history that
	// stayed verbatim, Summarized how many were replaced, Trigger "auto" or
	// "manual", Tokens the projected request size before and after.
	Kept         int    `json:"kept,omitempty"`
	Summarized   int    `json:"summarized,omitempty"`
	Trigger      string `json:"trigger,omitempty"`
	TokensBefore int    `json:"tokensBefore,omitempty"`
	TokensAfter  int    `json:"tokensAfter,omitempty"`

	// State fields (RecordState): Key names the state, State is its new
	// JSON value.
	Key   string          `json:"key,omitempty"`
	State json.RawMessage `json:"state,omitempty"`

	// Prefix fields (RecordPrefix, with Model the route it was sent to):
	// the system prompt and the tool list every request of the session
	// starts with, and the rendered sections
	// of that prompt. A user message of source SourceSystemPrompt carries
	// the sections it announced.
	System   string                         `json:"system,omitempty"`
	Tools    []llm.ToolSchema               `json:"tools,omitempty"`
	Sections []systemprompt.RenderedSection `json:"sections,omitempty"`

	// Usage fields (RecordUsage). Estimated is true when the stream carried
	// no usage and the figures are the harness's own estimate.
	Usage     *llm.Usage `json:"usage,omitempty"`
	Estimated bool       `json:"estimated,omitempty"`
}

// Entry returns r as a sessions entry: its type and time, and its other
// fields (Seq is assigned by the store).
func (r Record) Entry() (sessions.Entry, error) {
	e := sessions.Entry{Type: r.Type, Time: r.Time}
	r.Type, r.Seq, r.Time = "", 0, time.Time{}
	b, err := json.Marshal(r)
	if err != nil {
		return e, fmt.Errorf("session log: encoding %s record: %w", e.Type, err)
	}
	e.Fields = b
	return e, nil
}

// DecodeRecords decodes stored records.
func DecodeRecords(stored []sessions.Record) ([]Record, error) {
	out := make([]Record, 0, len(stored))
	for _, s := range stored {
		var r Record
		if err := json.Unmarshal(s.Data, &r); err != nil {
			return nil, fmt.Errorf("session record %d: %w", s.Seq, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// ReadSession reads the records of session id from store.
func ReadSession(ctx context.Context, store *sessions.Service, id string) ([]Record, error) {
	stored, err := store.Read(ctx, id)
	if err != nil {
		return nil, err
	}
	return DecodeRecords(stored)
}

// ErrSessionNotFound is returned when resuming an id that has no log.
var ErrSessionNotFound = sessions.ErrNotFound

// ErrSessionInUse is matched (errors.Is) by a [*SessionInUseError].
var ErrSessionInUse = sessions.ErrInUse

// SessionInUseError is returned when a session is open for writing
// elsewhere: another harness process, or another [Service.Open] in this
// one. Nothing was read or written.
type SessionInUseError = sessions.InUseError

// SessionInfo summarises one stored session for `harness sessions`.
type SessionInfo = sessions.Info

// ValidSessionID reports whether id can name a session log: letters,
// digits, '-' and '_', at most 128 bytes. Ids never become paths otherwise.
func ValidSessionID(id string) bool { return sessions.ValidID(id) }

// NewSessionID returns a fresh id that sorts by creation time:
// "20261130T010203-" followed by 8 random hex digits.
func NewSessionID(now time.Time) string { return sessions.NewID(now) }

// SessionsDir returns the directory of JSONL session logs under stateDir
// (the sessions-jsonl row's stateDir).
func SessionsDir(stateDir string) string { return sessions.JSONLDir(stateDir) }

// SessionPath returns the JSONL log file of session id under stateDir.
func SessionPath(stateDir, id string) string {
	return sessions.NewJSONL(SessionsDir(stateDir)).Location(id)
}

// ListSessions lists the sessions of a sessions-jsonl store under
// stateDir, newest first (through the sessions service).
func ListSessions(stateDir string) ([]SessionInfo, error) {
	p, err := sessions.New(sessions.NewJSONL(SessionsDir(stateDir))).List(context.Background(), sessions.Query{})
	return p.Sessions, err
}

// ReadJournal reads the records of the JSONL session log at path (a file
// STATEDIR/sessions/ID.jsonl) through a sessions-jsonl store over its
// directory; a torn final line is ignored.
func ReadJournal(path string) ([]Record, error) {
	id, ok := strings.CutSuffix(filepath.Base(path), ".jsonl")
	if !ok {
		return nil, fmt.Errorf("session log %s: not a .jsonl file", path)
	}
	return ReadSession(context.Background(), sessions.New(sessions.NewJSONL(filepath.Dir(path))), id)
}

// Replay rebuilds the conversation of a log: every record carrying a
// message, in order. An assistant message whose tool calls lack results
// (a crash between the two) gets aborted results so the history stays a
// valid request. A compaction record replaces the conversation so far by
// its summary followed by the last Kept messages: the compacted view the
// session had, exactly (the earlier records stay in the log).
//
// A rewind record takes the conversation back to before the prompt of
// its turn: that prompt and everything after it leave the history (the
// records stay in the log). A rewind to a turn that is not in the view
// (before a compaction, or unknown) changes nothing.
func Replay(recs []Record) []llm.Message {
	out, _ := replayView(recs)
	return out
}

// replayView is Replay with, per user turn still in the view, the index of
// its prompt in the result (what a rewind cuts at).
func replayView(recs []Record) ([]llm.Message, map[int]int) {
	var out []llm.Message
	starts := map[int]int{}
	pending := map[string]bool{}
	var open []llm.ToolCall
	flush := func() {
		for _, tc := range open {
			if pending[tc.ID] {
				out = append(out, llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: abortedResultText})
			}
		}
		open, pending = nil, map[string]bool{}
	}
	for _, r := range recs {
		if r.Type == RecordCompaction && r.Message != nil {
			flush()
			kept := out[len(out)-min(max(r.Kept, 0), len(out)):]
			out = append([]llm.Message{*r.Message}, kept...)
			clear(starts) // the turns before are summarized: no rewind reaches them
			continue
		}
		if r.Type == RecordRewind {
			if i, ok := starts[r.Turn]; ok {
				flush()
				out = cutView(out, i, starts)
				open, pending = nil, map[string]bool{}
			}
			continue
		}
		if r.Message == nil {
			continue
		}
		m := *r.Message
		switch m.Role {
		case llm.RoleTool:
			delete(pending, m.ToolCallID)
		default:
			flush()
		}
		if r.Type == RecordUser && r.Source == "" && r.Turn > 0 {
			if _, seen := starts[r.Turn]; !seen {
				starts[r.Turn] = len(out)
			}
		}
		out = append(out, m)
		if m.Role == llm.RoleAssistant {
			open = slices.Clone(m.ToolCalls)
			for _, tc := range m.ToolCalls {
				pending[tc.ID] = true
			}
		}
	}
	flush()
	return out, starts
}

// cutView cuts the view at index i (a turn's prompt) and forgets the turns
// that started there or later.
func cutView(view []llm.Message, i int, starts map[int]int) []llm.Message {
	for t, at := range starts {
		if at >= i {
			delete(starts, t)
		}
	}
	return view[:i]
}

// interruptedResults are the results Replay makes up (abortedResultText)
// for the tool calls of the log's last assistant message that have no
// result at the end of recs: the calls a dead process left running.
func interruptedResults(recs []Record) []llm.Message {
	var open []llm.ToolCall
	pending := map[string]bool{}
	for _, r := range recs {
		if r.Type == RecordRewind {
			open, pending = nil, map[string]bool{} // a rewind ends what was open, or cuts it away
			continue
		}
		if r.Message == nil {
			continue
		}
		switch m := r.Message; {
		case r.Type == RecordCompaction:
			open, pending = nil, map[string]bool{}
		case m.Role == llm.RoleTool:
			delete(pending, m.ToolCallID)
		case m.Role == llm.RoleAssistant:
			open, pending = slices.Clone(m.ToolCalls), map[string]bool{}
			for _, tc := range m.ToolCalls {
				pending[tc.ID] = true
			}
		default:
			open, pending = nil, map[string]bool{}
		}
	}
	var out []llm.Message
	for _, tc := range open {
		if pending[tc.ID] {
			out = append(out, llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: abortedResultText})
		}
	}
	return out
}

const abortedResultText = "Error: the tool call was interrupted before it finished"

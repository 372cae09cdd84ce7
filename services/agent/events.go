package agent

import (
	"encoding/json"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/tools"
)

// EventVersion is the version carried by every stream-json event ("v").
const EventVersion = 1

// EventType names what an [Event] reports.
type EventType string

// Event types, in the order a turn produces them: session (once per
// session open), user, then per step: step, reasoning/text deltas,
// assistant, tool_call and tool_result per call, usage; finally result.
const (
	EventSession    EventType = "session"     // SessionID, Cwd, Model, Resumed
	EventUser       EventType = "user"        // Text: the prompt (Source set for plugin-sourced context)
	EventStep       EventType = "step"        // Step started (Turn, Step)
	EventReasoning  EventType = "reasoning"   // Text: a reasoning delta
	EventText       EventType = "text"        // Text: an assistant text delta
	EventAssistant  EventType = "assistant"   // Message: the complete assistant message of the step
	EventToolCall   EventType = "tool_call"   // ToolCall: about to run
	EventToolResult EventType = "tool_result" // ToolResult: in model order
	// EventToolProgress (ToolProgress) reports a running call's output so
	// far (the bash tool's tail), at most every tools.ProgressInterval per
	// call, between its tool_call and its tool_result. Transient: it is not
	// logged, and stream-json leaves it out (see [StreamJSONEncoder]).
	EventToolProgress EventType = "tool_progress"
	EventUsage        EventType = "usage"      // Usage of the step (Estimated when the stream had none), Total of the session, ResponseModel, ResponseID
	EventNotice       EventType = "notice"     // Text: a warning worth showing (e.g. output cut by the length limit)
	EventCompaction   EventType = "compaction" // Compaction: the history was compacted (trigger, counts, tokens before and after)
	EventState        EventType = "state"      // Key, State: a plugin's session state changed (key "todos": the todo list)
	// EventBudget (Budget) reports a session's spend against a cap of its
	// budget: once per kind when the spend (or the projection of the next
	// call) reaches 80% of the cap, and when a model call was not sent
	// because it would have passed the cap (Exceeded; the turn then ends
	// with reason "budget").
	EventBudget EventType = "budget"
	EventResult EventType = "result" // Result: the end of the turn
)

// Event is one observable moment of a session, delivered in order to the
// session's observer and emitted as [Observed] to the session scope. Its
// JSON form ([Event.MarshalJSON], [StreamJSONEncoder]) is the one wire
// format of every front end: the `harness run --output stream-json` line.
type Event struct {
	Type      EventType `json:"type"`
	SessionID string    `json:"sessionId,omitempty"`
	// Depth and ParentID are set on the events of a subagent's session
	// (depth 1 for a child of a top-level session), relayed to its
	// parent's observer.
	Depth    int    `json:"depth,omitempty"`
	ParentID string `json:"parentSessionId,omitempty"`
	Turn     int    `json:"turn,omitempty"`
	Step     int    `json:"step,omitempty"`

	Text    string       `json:"text,omitempty"`
	Source  string       `json:"source,omitempty"`
	Message *llm.Message `json:"message,omitempty"`

	Cwd     string `json:"cwd,omitempty"`
	Model   string `json:"model,omitempty"`
	Resumed bool   `json:"resumed,omitempty"`

	ToolCall   *ToolCallEvent   `json:"toolCall,omitempty"`
	ToolResult *ToolResultEvent `json:"toolResult,omitempty"`
	// ToolProgress is a running call's output so far (EventToolProgress).
	ToolProgress *ToolProgressEvent `json:"toolProgress,omitempty"`

	Usage     *llm.Usage `json:"usage,omitempty"`
	Total     *llm.Usage `json:"total,omitempty"`
	Estimated bool       `json:"estimated,omitempty"`
	// ResponseModel (EventUsage) is the model name the provider reported
	// answering the step with (llm.Response.Model), which may differ from
	// the route's model; empty when the provider named none.
	ResponseModel string `json:"responseModel,omitempty"`
	// ResponseID (EventUsage) is the provider's id of the step's response
	// (llm.Response.ID, e.g. "chatcmpl-…"); empty when it sent none.
	ResponseID string `json:"responseId,omitempty"`

	Result *Result `json:"result,omitempty"`

	// ContextTokens (EventUsage) is the context in use after the step: with
	// a token meter, its projection of the request plus the reply (the figure
	// Session.ContextInUse and /context give, so every view agrees); without
	// one, the request's prompt tokens plus the reply's completion tokens.
	// Never a cumulative sum: Total is.
	ContextTokens int64 `json:"contextTokens,omitempty"`

	// Compaction describes a compaction (EventCompaction).
	Compaction *CompactionInfo `json:"compaction,omitempty"`

	// Budget is the spend against a cap (EventBudget).
	Budget *BudgetInfo `json:"budget,omitempty"`

	// Key and State: a session state's name and new JSON value (EventState).
	Key   string          `json:"key,omitempty"`
	State json.RawMessage `json:"state,omitempty"`
}

// ToolCallEvent describes a tool call about to run.
type ToolCallEvent struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	// Presentation is how the call looks to a person (status pending):
	// its title, kind, locations and, for an edit, the diff it proposes.
	// Front ends draw the call from it (see tools.Presentation).
	Presentation *tools.Presentation `json:"presentation,omitempty"`
}

// ToolResultEvent is the final result of one tool call.
type ToolResultEvent struct {
	CallID     string           `json:"callId"`
	Name       string           `json:"name"`
	Content    string           `json:"content"`
	IsError    bool             `json:"isError"`
	Error      *tools.ErrorInfo `json:"error,omitempty"`
	Meta       json.RawMessage  `json:"meta,omitempty"`
	DurationMs int64            `json:"durationMs"`
	// Denied is set when a permission decision refused the call (it did
	// not run); omitted otherwise.
	Denied bool `json:"denied,omitempty"`
	// Presentation is the call's final presentation (status completed or
	// failed, with the reason): a command that timed out, was killed or
	// exited non-zero is failed although IsError (what the model was
	// told) is false.
	Presentation *tools.Presentation `json:"presentation,omitempty"`
}

// ToolProgressEvent is the output of a running tool call so far. Each
// one supersedes the previous one of the same call.
type ToolProgressEvent struct {
	// CallID and Name identify the call (as in its ToolCallEvent).
	CallID string `json:"callId"`
	Name   string `json:"name"`
	// Tail is the end of the output so far, at most tools.MaxProgressTail
	// bytes, from a line start when one is in reach (as the tool produced
	// it: control characters included).
	Tail string `json:"tail"`
	// Bytes counts the output bytes produced so far (every stream).
	Bytes int64 `json:"bytes"`
	// Presentation is the running call's update (status in_progress, the
	// tail as terminal content).
	Presentation *tools.Presentation `json:"presentation,omitempty"`
}

// Result is the outcome of one user turn.
type Result struct {
	// Text is the final assistant text of the turn.
	Text string `json:"result"`
	// SessionID names the session (resume with it).
	SessionID string `json:"sessionId"`
	// IsError is true when the turn ended by a failure, max steps, the
	// budget or cancellation; Error then says why.
	IsError bool   `json:"isError"`
	Error   string `json:"error,omitempty"`
	// Code is the class of the failure that ended a turn with Reason
	// "error" when a model call failed: the llm error code ("SERVER",
	// "NETWORK", "RATE_LIMIT", "AUTH", "BILLING", "PROTOCOL", …); empty
	// for any other end (a tool or session failure has none).
	Code string `json:"code,omitempty"`
	// Status is the HTTP status of that failed model call, when it had one.
	Status int `json:"status,omitempty"`
	// Reason is why the turn ended: "stop", "max_steps", "aborted",
	// "error", "length", "concluded", "budget" (the next model call
	// would have passed a cap of the session's [Budget]), or the reason a
	// tool that concluded the turn named (tools.Execution.ConcludeTurnAs):
	// "plan" when a plan awaits a person's approval (the plan-mode
	// plugin's exit_plan_mode where no one could answer; Text is the plan).
	Reason string `json:"reason"`
	// Steps counts the model calls of the turn: a step the budget stopped, or
	// whose route refused before any request (a missing API key), is not one.
	Steps int `json:"steps"`
	// Usage sums the usage of the turn's model calls: as the provider
	// reported it, or the token meter's estimate for a call whose stream
	// carried none (then Estimated is true).
	Usage llm.Usage `json:"usage"`
	// Estimated is true when Usage includes estimated figures.
	Estimated bool `json:"estimated,omitempty"`
	// SubagentUsage is the part of Usage spent by subagents the turn
	// started (their own model calls; see [AddChildUsage]).
	SubagentUsage *llm.Usage `json:"subagentUsage,omitempty"`
	// DurationMs is the wall time of the turn.
	DurationMs int64 `json:"durationMs"`
	// TotalCostUSD is Usage priced with the session model's prices (per 1M
	// tokens, llm.Prices; subagent tokens at the same prices); nil when the
	// route has no prices configured. Claude Code's name.
	TotalCostUSD *float64 `json:"totalCostUsd,omitempty"`
}

// Observed is emitted (to the session scope) for every [Event] of a
// session, after the session's own observer saw it. Listeners must be
// quick: they run on the loop's goroutine.
var Observed = core.NewEmitEvent[Event]("agent/event")

// CompactionInfo describes one compaction of a session's history.
type CompactionInfo struct {
	// Trigger is "auto" (threshold or CONTEXT_LENGTH) or "manual".
	Trigger string `json:"trigger"`
	// Summarized messages were replaced by the summary; Kept stayed verbatim.
	Summarized int `json:"summarized"`
	Kept       int `json:"kept"`
	// TokensBefore and TokensAfter are the projected request sizes (the
	// token meter's figures, or bytes/4 without a meter).
	TokensBefore int `json:"tokensBefore"`
	TokensAfter  int `json:"tokensAfter"`
}

package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ToolKind says what a tool call does, so that a front end can choose its
// icon and layout without knowing the tool (the Agent Client Protocol's
// ToolKind; same names).
type ToolKind string

// Tool kinds (ACP).
const (
	KindRead    ToolKind = "read"    // reads files or data
	KindEdit    ToolKind = "edit"    // changes files or content
	KindDelete  ToolKind = "delete"  // removes files or data
	KindMove    ToolKind = "move"    // moves or renames
	KindSearch  ToolKind = "search"  // searches for information
	KindExecute ToolKind = "execute" // runs a command or code
	KindThink   ToolKind = "think"   // the agent's own reasoning or planning
	KindFetch   ToolKind = "fetch"   // retrieves external data
	KindOther   ToolKind = "other"   // anything else (the default)
)

// ToolCallStatus is where a tool call is (ACP's ToolCallStatus).
type ToolCallStatus string

// Tool call statuses (ACP).
const (
	StatusPending    ToolCallStatus = "pending"     // announced; not running yet (arguments streaming, or awaiting approval)
	StatusInProgress ToolCallStatus = "in_progress" // running
	StatusCompleted  ToolCallStatus = "completed"   // finished and did what it was asked
	StatusFailed     ToolCallStatus = "failed"      // finished with an error, was refused, timed out, was killed or exited non-zero
)

// Content types of a [ToolCallContent] (ACP).
const (
	ContentBlock    = "content"  // Content: a text block
	ContentDiff     = "diff"     // Path, OldText, NewText: a change to a file
	ContentTerminal = "terminal" // TerminalID, Terminal: a command's output
)

// Location is a file a tool call touches (ACP's ToolCallLocation), so that
// a front end can follow the agent: Path is absolute when the tool could
// resolve it; Line is 1-based, 0 when the call concerns the whole file.
type Location struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
}

// ToolCallContent is one piece of what a tool call shows (ACP's
// ToolCallContent union, discriminated by Type): a content block, a diff or
// a terminal.
//
// ACP's terminal content names a terminal the client created; the harness
// runs commands itself, so its terminal content carries the output and the
// exit in _meta (as ACP's terminal-output proposal and existing ACP agents
// do); TerminalID is the call's id.
type ToolCallContent struct {
	Type string `json:"type"`
	// Content is the block of a "content" item (a text block).
	Content *Content `json:"content,omitempty"`
	// Path, OldText and NewText are a "diff" item: the file and its text
	// before (nil: the file is new, or its old text is unknown) and after.
	Path    string  `json:"path,omitempty"`
	OldText *string `json:"oldText,omitempty"`
	NewText *string `json:"newText,omitempty"`
	// TerminalID and Terminal are a "terminal" item.
	TerminalID string    `json:"terminalId,omitempty"`
	Terminal   *Terminal `json:"_meta,omitempty"`
}

// Terminal is the output and exit of a command (a "terminal" item's _meta).
type Terminal struct {
	// Output is the end of what the command printed (stdout, then stderr),
	// at most [MaxTerminalOutput] bytes, as the terminal showed it.
	Output string `json:"output"`
	// ExitCode is the exit status; nil while running or when a signal ended it.
	ExitCode *int `json:"exitCode,omitempty"`
	// Signal names the signal that ended the command ("SIGKILL").
	Signal string `json:"signal,omitempty"`
}

// MaxTerminalOutput bounds Terminal.Output, in bytes.
const MaxTerminalOutput = 8 << 10

// TextContent is a "content" item holding text.
func TextContent(s string) ToolCallContent {
	c := Text(s)
	return ToolCallContent{Type: ContentBlock, Content: &c}
}

// DiffContent is a "diff" item: path changed from old (nil: new or unknown)
// to new.
func DiffContent(path string, old *string, new string) ToolCallContent {
	return ToolCallContent{Type: ContentDiff, Path: path, OldText: old, NewText: &new}
}

// TerminalContent is a "terminal" item of call id: its output (cut to its
// last MaxTerminalOutput bytes, from a line start), exit code and signal.
func TerminalContent(id, output string, exitCode *int, signal string) ToolCallContent {
	return ToolCallContent{Type: ContentTerminal, TerminalID: id, Terminal: &Terminal{Output: TailBytes(output, MaxTerminalOutput), ExitCode: exitCode, Signal: signal}}
}

// Presentation is how a tool call looks to a person: produced by the tool
// (WithPresent) or generically, carried on the agent's tool_call,
// tool_progress and tool_result events, and drawn by every front end (text
// output, TUI, web app) without knowing the tool. Its JSON form is ACP's
// tool_call / tool_call_update (same field names), so an ACP server can
// forward it as it is: a later presentation of the same ToolCallID updates
// the earlier one, and an omitted field leaves it as it was.
type Presentation struct {
	ToolCallID string `json:"toolCallId"`
	// Title says what the call works on, in one line: the file's path, the
	// command, the pattern; front ends print it after the tool's name (see
	// [Label]). The generic title starts with the tool's name.
	Title string `json:"title,omitempty"`
	// Kind is the category (KindOther when the tool says nothing).
	Kind ToolKind `json:"kind,omitempty"`
	// Status is pending at the call, in_progress while it runs, completed
	// or failed at its result.
	Status ToolCallStatus `json:"status,omitempty"`
	// Content is what the call shows: the diff it makes, the command's
	// output, a text.
	Content []ToolCallContent `json:"content,omitempty"`
	// Locations are the files the call touches.
	Locations []Location `json:"locations,omitempty"`
	// RawInput is the call's arguments (on the pending presentation only).
	RawInput json.RawMessage `json:"rawInput,omitempty"`
	// RawOutput is the tool's raw output, when it gives one.
	RawOutput json.RawMessage `json:"rawOutput,omitempty"`
	// Meta holds the harness's additions (ACP's _meta).
	Meta *PresentationMeta `json:"_meta,omitempty"`
}

// PresentationMeta is what the harness adds to ACP's shape: one-line
// texts the front ends print beside the title.
type PresentationMeta struct {
	// Reason says in one line why a failed call failed ("timed out after
	// 120000ms", "exit code 1", "file not found: a.go").
	Reason string `json:"reason,omitempty"`
	// Summary says in one line what a completed call produced ("12 lines",
	// "3 matches").
	Summary string `json:"summary,omitempty"`
	// Plan is the agent's whole plan after the call, when the call sets
	// one (a todo list): front ends show it as the current plan, and an
	// ACP server sends it as a plan update. Nil: the call sets none.
	Plan []PlanEntry `json:"plan,omitzero"`
}

// PlanEntry is one step of the agent's plan (ACP's PlanEntry, with the
// harness's ActiveForm).
type PlanEntry struct {
	// Content says what is to be done ("Run the tests").
	Content string `json:"content"`
	// Status is pending, in_progress or completed (ACP's statuses).
	Status string `json:"status"`
	// Priority is high, medium or low; "" when the plan does not rank.
	Priority string `json:"priority,omitempty"`
	// ActiveForm is the step in the present continuous ("Running the
	// tests"), shown while it is in progress; optional.
	ActiveForm string `json:"activeForm,omitempty"`
}

// Plan entry statuses (ACP).
const (
	PlanPending    = "pending"
	PlanInProgress = "in_progress"
	PlanCompleted  = "completed"
)

// FormatPlan renders a plan one entry per line: "[x] done", "[>] current
// (activeForm)", "[ ] pending" ("" for an empty plan).
func FormatPlan(plan []PlanEntry) string {
	var b strings.Builder
	for _, e := range plan {
		switch e.Status {
		case PlanCompleted:
			fmt.Fprintf(&b, "[x] %s\n", e.Content)
		case PlanInProgress:
			if e.ActiveForm != "" {
				fmt.Fprintf(&b, "[>] %s (%s)\n", e.Content, e.ActiveForm)
			} else {
				fmt.Fprintf(&b, "[>] %s\n", e.Content)
			}
		default:
			fmt.Fprintf(&b, "[ ] %s\n", e.Content)
		}
	}
	return b.String()
}

// Plan returns the plan p sets (nil when none).
func (p *Presentation) Plan() []PlanEntry {
	if p == nil || p.Meta == nil {
		return nil
	}
	return p.Meta.Plan
}

// SetPlan records that the call sets the agent's plan to plan (an empty,
// non-nil plan: the plan is now empty).
func (p *Presentation) SetPlan(plan []PlanEntry) {
	if plan == nil {
		plan = []PlanEntry{}
	}
	p.meta().Plan = plan
}

// Reason returns p's failure reason ("" when none).
func (p *Presentation) Reason() string {
	if p == nil || p.Meta == nil {
		return ""
	}
	return p.Meta.Reason
}

// Summary returns p's result summary ("" when none).
func (p *Presentation) Summary() string {
	if p == nil || p.Meta == nil {
		return ""
	}
	return p.Meta.Summary
}

// Fail marks p failed for reason (one line).
func (p *Presentation) Fail(reason string) {
	p.Status = StatusFailed
	p.meta().Reason = oneLine(reason, 300)
}

// Summarize sets p's result summary (one line).
func (p *Presentation) Summarize(summary string) { p.meta().Summary = oneLine(summary, 300) }

func (p *Presentation) meta() *PresentationMeta {
	if p.Meta == nil {
		p.Meta = &PresentationMeta{}
	}
	return p.Meta
}

// PresentCall is what [Present] presents: a call, and its outcome once it has one.
type PresentCall struct {
	// ID is the model's tool-call id; Name the tool called.
	ID, Name string
	// Arguments is the call's JSON arguments, as the model sent them.
	Arguments string
	// Cwd is the session's working directory (relative paths resolve there).
	Cwd string
	// Outcome is the call's final outcome; nil while the call is pending.
	Outcome *Outcome
}

// PresentInput is what a tool's presenter (WithPresent) sees.
type PresentInput[A, O any] struct {
	// ID is the call's id.
	ID string
	// Args are the decoded arguments.
	Args A
	// Out is the body's value when the call succeeded (zero otherwise).
	Out O
	// Outcome is the final outcome; nil while the call is pending.
	Outcome *Outcome
	// Cwd is the session's working directory.
	Cwd string
}

// Pending reports whether the call has no outcome yet.
func (in PresentInput[A, O]) Pending() bool { return in.Outcome == nil }

// Succeeded reports whether the call has a successful outcome (Out is set).
func (in PresentInput[A, O]) Succeeded() bool { return in.Outcome != nil && !in.Outcome.IsError }

// WithPresent sets the tool's presenter: what a person sees of a call, from
// its arguments (pending, Outcome nil) and again from its outcome. It
// fills what it knows (Title, Kind, Content, Locations; Fail for a result
// that failed although the body returned a value, such as a command that
// exited non-zero); [Present] fills the rest. It must be quick and pure
// (it runs on the agent's loop, once at the call and once at the result).
// Arguments that do not decode, and a presenter that panics, get the
// generic presentation.
func WithPresent[A, O any](present func(in PresentInput[A, O]) Presentation) Option {
	return optionFunc(func(t *Tool) error {
		if err := typeCheck[A, O](t, "WithPresent"); err != nil {
			return err
		}
		t.present = func(c PresentCall) (Presentation, bool) {
			var a A
			if raw, ok := any(&a).(*json.RawMessage); ok {
				*raw = json.RawMessage(c.Arguments)
			} else if json.Unmarshal([]byte(c.Arguments), &a) != nil {
				return Presentation{}, false
			}
			in := PresentInput[A, O]{ID: c.ID, Args: a, Outcome: c.Outcome, Cwd: c.Cwd}
			if c.Outcome != nil && !c.Outcome.IsError {
				in.Out = asType[O](c.Outcome.Value)
			}
			return present(in), true
		}
		return nil
	})
}

// Present returns the presentation of a call of t (nil: an unknown tool):
// the tool's presenter's, completed by what every presentation has: the
// id, a title (the tool's name and a short summary of the arguments when
// the presenter gave none), a kind (other), the status (pending without an
// outcome; failed when the outcome is an error or the presenter failed it;
// completed otherwise), the failure's reason, a summary of a completed
// call's result and, while pending, the raw input. A tool without a
// presenter gets the generic presentation, whose completed content is the
// start of the result's text.
func Present(t *Tool, c PresentCall) (p Presentation) {
	if t != nil && t.present != nil {
		func() {
			defer func() {
				if recover() != nil {
					p = Presentation{}
				}
			}()
			var ok bool
			if p, ok = t.present(c); !ok {
				p = Presentation{}
			}
		}()
	}
	p.ToolCallID = c.ID
	if p.Title == "" {
		p.Title = GenericTitle(c.Name, c.Arguments)
	}
	if p.Kind == "" {
		p.Kind = KindOther
	}
	o := c.Outcome
	switch {
	case o == nil:
		if p.Status == "" {
			p.Status = StatusPending
		}
		if json.Valid([]byte(c.Arguments)) {
			p.RawInput = json.RawMessage(c.Arguments)
		}
		return p
	case o.IsError:
		p.Status = StatusFailed
	case p.Status != StatusFailed:
		p.Status = StatusCompleted
	}
	text := TextOf(o.Content)
	if p.Status == StatusFailed && p.Reason() == "" {
		reason := o.ErrorMessage
		if reason == "" {
			reason = strings.TrimPrefix(text, "Error: ")
		}
		p.Fail(reason)
	}
	if p.Summary() == "" {
		p.Summarize(countLines(text))
	}
	if p.Content == nil && (t == nil || t.present == nil) && text != "" {
		p.Content = []ToolCallContent{TextContent(HeadBytes(text, MaxTerminalOutput))}
	}
	return p
}

// GenericTitle is the title of a call whose tool gives none: its name and a
// short summary of its arguments (the first string value of the JSON
// object, in the document's order; else the compact arguments), on one
// line of at most 80 characters.
func GenericTitle(name, arguments string) string {
	s := firstString(arguments)
	if s == "" {
		var b bytes.Buffer
		if json.Compact(&b, []byte(arguments)) == nil {
			s = b.String()
		} else {
			s = arguments
		}
		if s == "{}" {
			s = ""
		}
	}
	s = oneLine(s, 80)
	if s == "" {
		return name
	}
	return name + " " + s
}

// firstString returns the first non-empty top-level string value of a JSON
// object ("" when there is none or arguments is not an object).
func firstString(arguments string) string {
	dec := json.NewDecoder(strings.NewReader(arguments))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	for dec.More() {
		if _, err := dec.Token(); err != nil { // the key
			return ""
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return ""
		}
		var s string
		if len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil && strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

// oneLine folds s to its first line (with " …" when more followed),
// trimmed, at most n runes.
func oneLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i]) + " …"
	}
	if utf8.RuneCountInString(s) > n {
		r := []rune(s)
		s = string(r[:n-1]) + "…"
	}
	return s
}

// countLines is "N lines" of text ("1 line", "0 lines").
func countLines(text string) string {
	n := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		n++
	}
	if n == 1 {
		return "1 line"
	}
	return strconv.Itoa(n) + " lines"
}

// TailBytes returns the end of s of at most n bytes, starting after a
// newline when one is in its first half and never inside a UTF-8 sequence.
func TailBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < n/2 {
		return s[i+1:]
	}
	for len(s) > 0 && !utf8.RuneStart(s[0]) {
		s = s[1:]
	}
	return s
}

// HeadBytes returns the start of s of at most n bytes (never cutting a
// UTF-8 sequence), with "\n…" when it was cut.
func HeadBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for i := 0; i < utf8.UTFMax-1 && len(s) > 0; i++ { // drop a sequence cut short
		if r, size := utf8.DecodeLastRuneInString(s); r != utf8.RuneError || size != 1 {
			break
		}
		s = s[:len(s)-1]
	}
	return s + "\n…"
}

// Label is how a front end names a call in one line: the tool's name and
// the title ("bash go test ./...", "read main.go"), or the title alone when
// it already starts with the name (the generic title).
func Label(name string, p *Presentation) string {
	if p == nil || p.Title == "" || p.Title == name {
		return name
	}
	if strings.HasPrefix(p.Title, name+" ") {
		return p.Title
	}
	return name + " " + p.Title
}

// String renders p for logs: "status title: reason/summary".
func (p Presentation) String() string {
	s := fmt.Sprintf("%s %s", p.Status, p.Title)
	if r := p.Reason(); r != "" {
		return s + ": " + r
	}
	if m := p.Summary(); m != "" {
		return s + ": " + m
	}
	return s
}

package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Payload is the event JSON a hook command reads on stdin (Claude Code field
// names). Fields that do not apply to an event are omitted.
type Payload struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	PermissionMode string `json:"permission_mode"`
	// ToolName, ToolInput and ToolUseID are set for PreToolUse and PostToolUse.
	ToolName  string          `json:"tool_name,omitempty"`
	ToolInput json.RawMessage `json:"tool_input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	// ToolResponse is set for PostToolUse: Claude Code's shape for its
	// built-in tools, a [ToolResponse] for the others.
	ToolResponse json.RawMessage `json:"tool_response,omitempty"`
	// Prompt is set for UserPromptSubmit.
	Prompt string `json:"prompt,omitempty"`
	// Source is set for SessionStart: startup, resume, clear or compact.
	Source string `json:"source,omitempty"`
	// StopHookActive is set for Stop: true when the turn already continues
	// because a Stop hook blocked, so a hook can avoid looping forever.
	StopHookActive *bool `json:"stop_hook_active,omitempty"`
	// LastAssistantMessage is set for Stop: the text of the turn's final
	// assistant message.
	LastAssistantMessage *string `json:"last_assistant_message,omitempty"`
	// Trigger and CustomInstructions are set for PreCompact: "manual" or
	// "auto", and the user's instructions for the summary ("" for auto).
	Trigger            string  `json:"trigger,omitempty"`
	CustomInstructions *string `json:"custom_instructions,omitempty"`
	// Message, Title and NotificationType are set for Notification.
	Message          string `json:"message,omitempty"`
	Title            string `json:"title,omitempty"`
	NotificationType string `json:"notification_type,omitempty"`
	// Reason is set for SessionEnd (always "other").
	Reason string `json:"reason,omitempty"`
	// AgentID and AgentType are set for SubagentStart and SubagentStop;
	// AgentTranscriptPath for SubagentStop.
	AgentID             string `json:"agent_id,omitempty"`
	AgentType           string `json:"agent_type,omitempty"`
	AgentTranscriptPath string `json:"agent_transcript_path,omitempty"`
}

// ToolResponse is the tool result a PostToolUse hook sees for a tool
// Claude Code has no built-in counterpart of (MCP tools, todo_write, …).
type ToolResponse struct {
	// Content is the result text as the model would see it.
	Content string `json:"content"`
	// IsError is true for a failed call.
	IsError bool `json:"isError"`
	// Value is the tool's structured output (successful calls only).
	Value json.RawMessage `json:"value,omitempty"`
}

// verdict is a hook's permission decision, ordered by precedence.
type verdict int

const (
	verdictNone verdict = iota
	verdictAllow
	verdictAsk
	verdictDeny
)

// outcome is one hook run decoded per the protocol.
type outcome struct {
	hook     string
	verdict  verdict
	reason   string
	context  string
	replace  *string // PostToolUse output replacement
	plain    string  // stdout that is not JSON (exit 0): context for SessionStart, UserPromptSubmit
	failed   bool    // timed out, crashed, could not start (126, 127, spawn error), or printed invalid JSON
	failOpen bool    // the hook's failOpen: a failure is a non-blocking error even for PreToolUse
	failure  string  // why, for reasons and logs
	warning  string  // non-blocking error (exit code other than 0 and 2)
	exitCode int

	systemMessage string   // shown to the user
	halt          bool     // continue: false
	haltReason    string   // its stopReason
	ignored       []string // output fields parsed but not honoured for this event
	updatedInput  json.RawMessage
}

// runResult is what running one hook command produced.
type runResult struct {
	exitCode int    // -1 when the process did not exit normally
	signal   string // set when killed by a signal
	timedOut bool
	stdout   []byte
	stderr   []byte
	err      error // could not be started / waited for
}

// decode applies the protocol to one hook run: a timeout, a signal, a start
// failure (a spawn error, or bash's exit status 126 or 127: the command was
// not executable or not found) or invalid JSON on stdout is a failure; exit 2 is a block with
// stderr as its reason; another non-zero exit is a non-blocking error; exit 0
// with a JSON object on stdout carries the structured answer, and plain text
// on stdout carries nothing.
func decode(event, hook string, timeout string, r runResult) outcome {
	o := outcome{hook: hook, exitCode: r.exitCode}
	stderr := strings.TrimSpace(string(r.stderr))
	switch {
	case r.timedOut:
		return failed(o, fmt.Sprintf("timed out after %s", timeout))
	case r.err != nil:
		return failed(o, fmt.Sprintf("could not run: %v", r.err))
	case r.signal != "":
		return failed(o, fmt.Sprintf("was killed by signal %s", r.signal))
	case r.exitCode == 126 || r.exitCode == 127:
		// bash's "cannot execute" and "command not found": the hook did not
		// run at all (a missing or non-executable script, a typo).
		why := "could not run: exit status %d (command not found)"
		if r.exitCode == 126 {
			why = "could not run: exit status %d (not executable)"
		}
		why = fmt.Sprintf(why, r.exitCode)
		if stderr != "" {
			why += ": " + firstLine(stderr)
		}
		return failed(o, why)
	case r.exitCode == 2:
		o.verdict = verdictDeny
		o.reason = stderr
		if o.reason == "" {
			o.reason = fmt.Sprintf("blocked by hook %q", hook)
		}
		return o
	case r.exitCode != 0:
		o.warning = fmt.Sprintf("exited with status %d", r.exitCode)
		if stderr != "" {
			o.warning += ": " + firstLine(stderr)
		}
		return o
	}
	out := bytes.TrimSpace(r.stdout)
	if len(out) == 0 || out[0] != '{' {
		o.plain = string(out)
		return o
	}
	var s structured
	if err := json.Unmarshal(out, &s); err != nil {
		return failed(o, fmt.Sprintf("printed invalid JSON: %v", err))
	}
	return s.apply(event, hook, o)
}

func failed(o outcome, why string) outcome {
	o.failed, o.failure = true, why
	return o
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// structured is the JSON a hook may print on stdout (exit 0).
type structured struct {
	Continue           *bool               `json:"continue"`
	StopReason         string              `json:"stopReason"`
	Decision           string              `json:"decision"`
	Reason             string              `json:"reason"`
	SystemMessage      string              `json:"systemMessage"`
	SuppressOutput     bool                `json:"suppressOutput"`
	HookSpecificOutput *hookSpecificOutput `json:"hookSpecificOutput"`
}

type hookSpecificOutput struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision"`
	PermissionDecisionReason string          `json:"permissionDecisionReason"`
	AdditionalContext        string          `json:"additionalContext"`
	UpdatedToolOutput        json.RawMessage `json:"updatedToolOutput"`
	UpdatedMCPToolOutput     json.RawMessage `json:"updatedMCPToolOutput"`
	UpdatedInput             json.RawMessage `json:"updatedInput"`
	// Decision is PermissionRequest's answer.
	Decision *permissionDecision `json:"decision"`
}

// permissionDecision is the hookSpecificOutput.decision of a
// PermissionRequest hook.
type permissionDecision struct {
	Behavior     string          `json:"behavior"`
	Message      string          `json:"message"`
	UpdatedInput json.RawMessage `json:"updatedInput"`
	Interrupt    bool            `json:"interrupt"`
}

// apply folds the structured answer into o. The top-level `decision` accepts
// allow|deny|ask and the legacy approve|block; hookSpecificOutput's
// permissionDecision overrides it. A hookSpecificOutput naming another event
// is ignored. `continue: false` halts the session after the event (o.halt,
// with stopReason) and also stops the action it gates: a PreToolUse call is
// denied and a UserPromptSubmit prompt rejected with the stop reason; for
// Stop it wins over a block. systemMessage is kept for the user.
// suppressOutput is honoured by construction (a hook's stdout is never shown
// to the user). Fields parsed but not acted on for the event are listed in
// o.ignored.
func (s structured) apply(event, hook string, o outcome) outcome {
	o.verdict, o.reason = verdictOf(s.Decision), s.Reason
	o.systemMessage = strings.TrimSpace(s.SystemMessage)
	if h := s.HookSpecificOutput; h != nil && (h.HookEventName == "" || h.HookEventName == event) {
		if v := verdictOf(h.PermissionDecision); v != verdictNone {
			o.verdict, o.reason = v, h.PermissionDecisionReason
		}
		o.context = h.AdditionalContext
		if r := firstPresent(h.UpdatedToolOutput, h.UpdatedMCPToolOutput); r != nil {
			if event == EventPostToolUse {
				text := outputText(r)
				o.replace = &text
			} else {
				o.ignored = append(o.ignored, "hookSpecificOutput.updatedToolOutput")
			}
		}
		if pd := h.Decision; pd != nil {
			if event == EventPermissionRequest {
				switch strings.ToLower(pd.Behavior) {
				case "allow":
					o.verdict, o.reason = verdictAllow, ""
				case "deny":
					o.verdict, o.reason = verdictDeny, pd.Message
				}
				if firstPresent(pd.UpdatedInput) != nil {
					o.ignored = append(o.ignored, "hookSpecificOutput.decision.updatedInput")
				}
				if pd.Interrupt {
					o.ignored = append(o.ignored, "hookSpecificOutput.decision.interrupt")
				}
			} else {
				o.ignored = append(o.ignored, "hookSpecificOutput.decision")
			}
		}
		if r := firstPresent(h.UpdatedInput); r != nil {
			if event == EventPreToolUse {
				o.updatedInput = r
			} else {
				o.ignored = append(o.ignored, "hookSpecificOutput.updatedInput")
			}
		}
	}
	if s.Continue != nil && !*s.Continue {
		o.halt, o.haltReason = true, strings.TrimSpace(s.StopReason)
		switch event {
		case EventPreToolUse, EventUserPromptSubmit:
			o.verdict, o.reason = verdictDeny, s.StopReason
		case EventStop:
			o.verdict, o.reason = verdictNone, ""
		case EventSessionStart:
			o.ignored = append(o.ignored, "continue")
		}
	}
	if o.verdict == verdictDeny && strings.TrimSpace(o.reason) == "" {
		o.reason = fmt.Sprintf("blocked by hook %q", hook)
	}
	return o
}

func verdictOf(s string) verdict {
	switch strings.ToLower(s) {
	case "allow", "approve":
		return verdictAllow
	case "ask":
		return verdictAsk
	case "deny", "block":
		return verdictDeny
	}
	return verdictNone
}

func firstPresent(raws ...json.RawMessage) json.RawMessage {
	for _, r := range raws {
		if len(r) > 0 && string(r) != "null" {
			return r
		}
	}
	return nil
}

// outputText turns a replacement into result text: a JSON string is the text
// itself; any other JSON value is its compact encoding.
func outputText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) == nil {
		return b.String()
	}
	return string(raw)
}

// merged is the fold of every hook that ran for one event.
type merged struct {
	verdict      verdict
	reason       string   // reasons of the winning verdict, joined by a blank line
	contexts     []string // additionalContext values, in configuration order
	replace      *string  // the last replacement in configuration order
	failures     []string // `hook "x" timed out after 60s` …
	warnings     []string
	halt         bool            // some hook answered continue: false
	haltReason   string          // their stopReasons, joined
	updatedInput json.RawMessage // the last updatedInput in configuration order
}

// merge folds outcomes (in configuration order): the strictest verdict wins
// (deny > ask > allow), with the reasons of every hook that gave it. When
// failClosed is set, a failed hook counts as a deny naming the hook, unless
// that hook is failOpen.
func merge(outs []outcome, failClosed bool) merged {
	var m merged
	reasons := map[verdict][]string{}
	for _, o := range outs {
		v, reason := o.verdict, o.reason
		if o.failed {
			msg := fmt.Sprintf("hook %q %s", o.hook, o.failure)
			m.failures = append(m.failures, msg)
			if !failClosed || o.failOpen {
				continue
			}
			v, reason = verdictDeny, msg+"; failing closed"
		}
		if o.warning != "" {
			m.warnings = append(m.warnings, fmt.Sprintf("hook %q %s", o.hook, o.warning))
		}
		if v > m.verdict {
			m.verdict = v
		}
		if reason != "" {
			reasons[v] = append(reasons[v], reason)
		}
		if o.context != "" {
			m.contexts = append(m.contexts, o.context)
		}
		if o.replace != nil {
			m.replace = o.replace
		}
		if o.halt {
			m.halt = true
			if o.haltReason != "" {
				m.haltReason = strings.TrimSpace(m.haltReason + "\n\n" + o.haltReason)
			}
		}
		if o.updatedInput != nil {
			m.updatedInput = o.updatedInput
		}
	}
	m.reason = strings.Join(reasons[m.verdict], "\n\n")
	return m
}

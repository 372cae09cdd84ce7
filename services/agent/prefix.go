package agent

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/dshgo/harness/services/llm"
	"github.com/dshgo/harness/services/systemprompt"
)

// SourceSystemPrompt marks the user message that carries the sections of
// the system prompt that changed after the session recorded it.
const SourceSystemPrompt = "systemprompt:changed"

// The request prefix of a session (what a provider's prompt cache
// matches) only grows. Before its first model call a session records the
// system prompt and the tool list it starts with (a RecordPrefix) and
// every later request of the session, in this process or after a resume
// in another, sends those bytes again. What changes later is appended:
//
//   - a system-prompt section whose text changed (the git status of a
//     resumed session, an edited instruction file), appeared or went away
//     is sent as one user message at the end of the history (source
//     [SourceSystemPrompt]); the recorded system prompt stays as it was;
//   - a changed tool list is the one thing that cannot be appended to: the
//     new list keeps the recorded order, replaces a schema that changed in
//     place, drops a tool no longer offered and adds new tools at the end.
//     It is recorded as the session's new prefix and a notice says the
//     provider's cache restarts at the tools.
//
// Tool schemas are compared as JSON values (key order and whitespace do
// not count) and sent compacted, so a provider that serialises a schema
// differently on another start does not change a byte.
//
// A prefix is kept per model: a session switched to another route (whose
// cache is another one) records the live prompt and tools afresh.
type prefixState struct {
	pinned   bool
	route    string
	system   string
	tools    []llm.ToolSchema
	sections []systemprompt.RenderedSection // as last sent (recorded, then updates)
}

// livePrefix is what the session's prompt assembly produced for one step.
type livePrefix struct {
	system   string
	sections []systemprompt.RenderedSection
	tools    []llm.ToolSchema
}

// prefixLocked returns the system prompt and tools the next request sends:
// the recorded ones, or live's when nothing is recorded yet. ss.mu is held.
func (ss *Session) prefixLocked(live livePrefix) (string, []llm.ToolSchema) {
	if !ss.prefix.pinned || ss.prefix.route != ss.route {
		return live.system, live.tools
	}
	return ss.prefix.system, ss.prefix.tools
}

// reconcilePrefix records the prefix before the session's first request,
// or appends what changed since (see prefixState) to req. It is called
// once per model request, before it is sent.
func (t *turn) reconcilePrefix(live livePrefix, req *llm.Request) error {
	ss := t.ss
	ss.mu.Lock()
	st := ss.prefix
	route := ss.route
	ss.mu.Unlock()
	if !st.pinned || st.route != route {
		if err := ss.write(Record{Type: RecordPrefix, Turn: t.n, Step: t.step, Model: route, System: live.system, Tools: live.tools, Sections: live.sections}); err != nil {
			return err
		}
		ss.mu.Lock()
		ss.prefix = prefixState{pinned: true, route: route, system: live.system, tools: live.tools, sections: live.sections}
		ss.mu.Unlock()
		return nil
	}
	if tools, changed := mergeTools(st.tools, live.tools); changed {
		if err := ss.write(Record{Type: RecordPrefix, Turn: t.n, Step: t.step, Model: route, System: st.system, Tools: tools, Sections: st.sections}); err != nil {
			return err
		}
		ss.mu.Lock()
		ss.prefix.tools = tools
		ss.mu.Unlock()
		req.Tools = tools
		ss.observe(Event{Type: EventNotice, Turn: t.n, Step: t.step, Text: "the tool list changed: the provider's prompt cache restarts at the tools"})
	}
	text, changed := sectionUpdate(st.sections, live.sections)
	if !changed {
		return nil
	}
	m := &llm.Message{Role: llm.RoleUser, Content: text}
	if err := ss.append(Record{Type: RecordUser, Turn: t.n, Step: t.step, Message: m, Source: SourceSystemPrompt, Sections: live.sections}); err != nil {
		return err
	}
	ss.observe(Event{Type: EventUser, Turn: t.n, Step: t.step, Text: text, Source: SourceSystemPrompt})
	ss.mu.Lock()
	ss.prefix.sections = live.sections
	ss.mu.Unlock()
	req.Messages = append(req.Messages, *m)
	return nil
}

// replayPrefix restores the prefix state from a stored record.
func (ss *Session) replayPrefix(r Record) {
	switch {
	case r.Type == RecordPrefix:
		ss.prefix = prefixState{pinned: true, route: r.Model, system: r.System, tools: r.Tools, sections: r.Sections}
	case r.Type == RecordUser && r.Source == SourceSystemPrompt:
		ss.prefix.sections = r.Sections
	}
}

// sectionUpdate is the message telling the model which sections of the
// system prompt changed from was to now, and whether any did.
func sectionUpdate(was, now []systemprompt.RenderedSection) (string, bool) {
	old := make(map[string]string, len(was))
	for _, s := range was {
		old[s.Name] = s.Text
	}
	var changed []string
	for _, s := range now {
		if text, ok := old[s.Name]; !ok || text != s.Text {
			changed = append(changed, s.Text)
		}
		delete(old, s.Name)
	}
	if len(changed) == 0 && len(old) == 0 {
		return "", false
	}
	var b strings.Builder
	b.WriteString("[Parts of the system prompt changed since the session started. The current text of each changed part follows; it replaces the earlier one.]")
	for _, text := range changed {
		b.WriteString("\n\n")
		b.WriteString(text)
	}
	if len(old) > 0 {
		gone := make([]string, 0, len(old))
		for _, s := range was {
			if _, ok := old[s.Name]; ok {
				gone = append(gone, s.Name)
			}
		}
		b.WriteString("\n\n[No longer in effect: the parts named " + strings.Join(gone, ", ") + ".]")
	}
	return b.String(), true
}

// mergeTools is the tool list that follows pinned when live is offered:
// pinned's order, live's schema where one changed, without tools no longer
// offered, new tools at the end; changed reports whether it differs.
func mergeTools(pinned, live []llm.ToolSchema) ([]llm.ToolSchema, bool) {
	byName := make(map[string]llm.ToolSchema, len(live))
	for _, ts := range live {
		byName[ts.Name] = ts
	}
	out := make([]llm.ToolSchema, 0, len(live))
	changed := false
	for _, ts := range pinned {
		l, ok := byName[ts.Name]
		switch {
		case !ok:
			changed = true
			continue
		case l.Description != ts.Description || !sameJSON(l.Parameters, ts.Parameters):
			changed = true
			out = append(out, l)
		default:
			out = append(out, ts)
		}
		delete(byName, ts.Name)
	}
	for _, ts := range live {
		if _, ok := byName[ts.Name]; ok {
			changed = true
			out = append(out, ts)
		}
	}
	if !changed {
		return pinned, false
	}
	return out, true
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ca, _ := json.Marshal(x) // maps marshal with sorted keys
	cb, _ := json.Marshal(y)
	return bytes.Equal(ca, cb)
}

// compactSchema is parameters without insignificant whitespace (as a
// session log stores and returns it), or as it is when not valid JSON.
func compactSchema(parameters json.RawMessage) json.RawMessage {
	if len(parameters) == 0 {
		return parameters
	}
	var b bytes.Buffer
	if json.Compact(&b, parameters) != nil {
		return parameters
	}
	return slices.Clip(b.Bytes())
}

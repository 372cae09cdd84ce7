package hooks

import (
	"errors"
	"strings"
	"testing"
)

func TestDecodeProtocol(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		event   string
		run     runResult
		verdict verdict
		reason  string
		failed  string
		warning string
		context string
		replace string
	}{
		{name: "exit 0 silent", run: runResult{}, verdict: verdictNone},
		{name: "exit 0 plain text", run: runResult{stdout: []byte("checked ok\n")}, verdict: verdictNone},
		{name: "exit 2 stderr reason", run: runResult{exitCode: 2, stderr: []byte("no rm please\n")}, verdict: verdictDeny, reason: "no rm please"},
		{name: "exit 2 no stderr", run: runResult{exitCode: 2}, verdict: verdictDeny, reason: `blocked by hook "h"`},
		{name: "exit 1 non-blocking", run: runResult{exitCode: 1, stderr: []byte("oops\nmore")}, warning: "exited with status 1: oops"},
		{name: "timeout", run: runResult{exitCode: -1, timedOut: true}, failed: "timed out after 1s"},
		{name: "signal", run: runResult{exitCode: -1, signal: "killed"}, failed: "was killed by signal killed"},
		{name: "start failure", run: runResult{exitCode: -1, err: errors.New("no bash")}, failed: "could not run: no bash"},
		{name: "invalid JSON", run: runResult{stdout: []byte(`{"decision": `)}, failed: "printed invalid JSON: unexpected end of JSON input"},
		{name: "top-level deny", run: runResult{stdout: []byte(`{"decision":"deny","reason":"nope"}`)}, verdict: verdictDeny, reason: "nope"},
		{name: "top-level block legacy", run: runResult{stdout: []byte(`{"decision":"block"}`)}, verdict: verdictDeny, reason: `blocked by hook "h"`},
		{name: "top-level approve legacy", run: runResult{stdout: []byte(`{"decision":"approve"}`)}, verdict: verdictAllow},
		{name: "permissionDecision ask", event: EventPreToolUse,
			run:     runResult{stdout: []byte(`{"decision":"allow","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"check"}}`)},
			verdict: verdictAsk, reason: "check"},
		{name: "other event's output ignored", event: EventPreToolUse,
			run:     runResult{stdout: []byte(`{"hookSpecificOutput":{"hookEventName":"PostToolUse","permissionDecision":"deny"}}`)},
			verdict: verdictNone},
		{name: "continue false", event: EventPreToolUse, run: runResult{stdout: []byte(`{"continue":false,"stopReason":"halt"}`)}, verdict: verdictDeny, reason: "halt"},
		{name: "context and string replacement", event: EventPostToolUse,
			run:     runResult{stdout: []byte(`{"hookSpecificOutput":{"additionalContext":"ctx","updatedToolOutput":"new text"}}`)},
			context: "ctx", replace: "new text"},
		{name: "MCP object replacement", event: EventPostToolUse,
			run:     runResult{stdout: []byte(`{"hookSpecificOutput":{"updatedMCPToolOutput":{"a": 1}}}`)},
			replace: `{"a":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := decode(tt.event, "h", "1s", tt.run)
			if o.verdict != tt.verdict || o.reason != tt.reason || o.failure != tt.failed || o.failed != (tt.failed != "") ||
				o.warning != tt.warning || o.context != tt.context {
				t.Fatalf("decode = %+v", o)
			}
			if got := ""; o.replace != nil {
				got = *o.replace
				if got != tt.replace {
					t.Fatalf("replace = %q, want %q", got, tt.replace)
				}
			} else if tt.replace != "" {
				t.Fatalf("no replacement, want %q", tt.replace)
			}
		})
	}
}

func TestMergePrecedenceWhateverTheOrder(t *testing.T) {
	t.Parallel()
	allow := outcome{hook: "allow-all", verdict: verdictAllow}
	ask := outcome{hook: "ask", verdict: verdictAsk, reason: "maybe"}
	deny := outcome{hook: "deny-rm", verdict: verdictDeny, reason: "no rm"}
	audit := outcome{hook: "audit"}
	orders := [][]outcome{{allow, ask, deny, audit}, {deny, allow, audit, ask}, {audit, ask, allow, deny}}
	for _, outs := range orders {
		m := merge(outs, true)
		if m.verdict != verdictDeny || m.reason != "no rm" {
			t.Errorf("merge = %+v", m)
		}
	}
	if m := merge([]outcome{allow, ask, audit}, true); m.verdict != verdictAsk || m.reason != "maybe" {
		t.Errorf("merge without deny = %+v", m)
	}
	if m := merge([]outcome{audit}, true); m.verdict != verdictNone {
		t.Errorf("merge of silence = %+v", m)
	}
}

func TestMergeFailures(t *testing.T) {
	t.Parallel()
	slow := outcome{hook: "slow", failed: true, failure: "timed out after 1s"}
	allow := outcome{hook: "allow-all", verdict: verdictAllow}
	m := merge([]outcome{allow, slow}, true)
	if m.verdict != verdictDeny || m.reason != `hook "slow" timed out after 1s; failing closed` {
		t.Errorf("fail closed merge = %+v", m)
	}
	m = merge([]outcome{allow, slow}, false)
	if m.verdict != verdictAllow || len(m.failures) != 1 || m.failures[0] != `hook "slow" timed out after 1s` {
		t.Errorf("fail open merge = %+v", m)
	}
	a, b := "a", "b"
	m = merge([]outcome{{context: "c1", replace: &a}, {context: "c2", replace: &b}}, false)
	if strings.Join(m.contexts, ",") != "c1,c2" || *m.replace != "b" {
		t.Errorf("contexts/replace = %+v", m)
	}
}

func TestMatcher(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"", "bash", true}, {"*", "anything", true},
		{"Bash", "bash", true}, {"Edit|Write", "write", true}, {"Edit|Write", "read", false},
		{"Bash", "bashful", false},
		{"mcp__.*", "mcp__github__x", true}, {"^re", "read", true}, {"^re", "grep", false},
	}
	for _, tt := range tests {
		m, err := compileMatcher(tt.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.match(tt.name); got != tt.want {
			t.Errorf("matcher %q on %q = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{Hooks: Events{PreToolUse: []MatcherGroup{{Matcher: "(", Hooks: []CommandHook{{Command: "x"}}}}}},
			"hooks.PreToolUse[0].matcher: invalid regular expression \"(\": error parsing regexp: missing closing ): `(`"},
		{Config{Hooks: Events{PostToolUse: []MatcherGroup{{}}}}, "hooks.PostToolUse[0].hooks: at least one hook is required"},
		{Config{Hooks: Events{Stop: []MatcherGroup{{Hooks: []CommandHook{{Type: "http", Command: "x"}}}}}},
			`hooks.Stop[0].hooks[0].type: "http" is not supported (only "command")`},
		{Config{Hooks: Events{SessionStart: []MatcherGroup{{Hooks: []CommandHook{{Command: " "}}}}}},
			"hooks.SessionStart[0].hooks[0].command: must not be empty"},
		{Config{Hooks: Events{UserPromptSubmit: []MatcherGroup{{Hooks: []CommandHook{{Command: "x", Timeout: -1}}}}}},
			"hooks.UserPromptSubmit[0].hooks[0].timeout: must not be negative"},
	}
	for _, tt := range tests {
		if err := tt.cfg.Validate(); err == nil || err.Error() != tt.want {
			t.Errorf("Validate() = %v, want %q", err, tt.want)
		}
	}
}

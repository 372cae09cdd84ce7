// Package hookstest holds the test fixtures shared by the tests of command
// hooks (plugins/hooks as the agent and the harness CLI drive it): a bash
// hook script, written the way Claude Code users write one, that records
// every event payload it reads on stdin and answers by rules, and the
// decoding of the PreCompact payloads it recorded.
package hookstest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Rule is one answer of a [Script]: when the payload read on stdin contains
// every string of Contains, in that order, the script writes Stdout to its
// standard output and Stderr to its standard error (each followed by a
// newline when not empty) and exits with Exit. The strings are matched
// literally (they are shell-quoted into a bash case pattern).
type Rule struct {
	// Contains are the substrings the payload must contain, in order; at
	// least one.
	Contains []string
	// Stdout is printed on standard output, e.g. a JSON decision.
	Stdout string
	// Stderr is printed on standard error, e.g. the reason of an exit 2.
	Stderr string
	// Exit is the script's exit status when the rule matches.
	Exit int
}

// Script is a command hook written by [NewScript].
type Script struct {
	// Path is the absolute path of the executable bash script, to be
	// configured as the hook's command.
	Path     string
	payloads string
}

// NewScript writes an executable bash script (0700) into a new temporary
// directory of t. On every run it appends the payload read on stdin as one
// line to a private record, then answers with the first of rules that
// matches the payload; when none matches it prints nothing and exits 0. A
// rule without Contains fails the test.
func NewScript(t testing.TB, rules ...Rule) *Script {
	t.Helper()
	dir := t.TempDir()
	s := &Script{Path: filepath.Join(dir, "hook.sh"), payloads: filepath.Join(dir, "payloads")}
	var b strings.Builder
	b.WriteString("#!/usr/bin/env bash\ninput=$(cat)\n")
	fmt.Fprintf(&b, "printf '%%s\\n' \"$input\" >> %s\n", shQuote(s.payloads))
	b.WriteString("case \"$input\" in\n")
	for i, r := range rules {
		if len(r.Contains) == 0 {
			t.Fatalf("hookstest: rule %d has no Contains", i)
		}
		pattern := "*"
		for _, c := range r.Contains {
			pattern += shQuote(c) + "*"
		}
		fmt.Fprintf(&b, "  %s)", pattern)
		if r.Stdout != "" {
			fmt.Fprintf(&b, " printf '%%s\\n' %s;", shQuote(r.Stdout))
		}
		if r.Stderr != "" {
			fmt.Fprintf(&b, " printf '%%s\\n' %s >&2;", shQuote(r.Stderr))
		}
		fmt.Fprintf(&b, " exit %d ;;\n", r.Exit)
	}
	b.WriteString("esac\nexit 0\n")
	if err := os.WriteFile(s.Path, []byte(b.String()), 0o700); err != nil {
		t.Fatal(err)
	}
	return s
}

// Lines returns the payloads the script has read so far, one a run, in the
// order of the runs. It fails the test when the script never ran.
func (s *Script) Lines(t testing.TB) []string {
	t.Helper()
	raw, err := os.ReadFile(s.payloads)
	if err != nil {
		t.Fatalf("the hook never ran: %v", err)
	}
	return strings.Split(strings.TrimSpace(string(raw)), "\n")
}

// PreCompact is the PreCompact event as a command hook receives it on stdin
// (Claude Code's field names). A nil field was absent from the payload.
type PreCompact struct {
	SessionID          *string `json:"session_id"`
	TranscriptPath     *string `json:"transcript_path"`
	Cwd                *string `json:"cwd"`
	HookEventName      *string `json:"hook_event_name"`
	Trigger            *string `json:"trigger"`
	CustomInstructions *string `json:"custom_instructions"`
}

// PreCompacts decodes every payload the script has read as a [PreCompact];
// a payload that is not JSON fails the test.
func (s *Script) PreCompacts(t testing.TB) []PreCompact {
	t.Helper()
	lines := s.Lines(t)
	out := make([]PreCompact, len(lines))
	for i, line := range lines {
		if err := json.Unmarshal([]byte(line), &out[i]); err != nil {
			t.Fatalf("payload %d: %v: %s", i+1, err, line)
		}
	}
	return out
}

// Mismatch says how p differs from a PreCompact event with this trigger
// ("auto" or "manual"), custom_instructions, cwd and session_id (any
// non-empty session_id when sessionID is ""), and an absolute
// transcript_path; it returns "" when p matches.
func (p PreCompact) Mismatch(trigger, instructions, cwd, sessionID string) string {
	var bad []string
	check := func(name string, got *string, ok func(string) bool, want string) {
		switch {
		case got == nil:
			bad = append(bad, name+" missing")
		case !ok(*got):
			bad = append(bad, fmt.Sprintf("%s %q, want %s", name, *got, want))
		}
	}
	is := func(want string) func(string) bool { return func(s string) bool { return s == want } }
	check("hook_event_name", p.HookEventName, is("PreCompact"), `"PreCompact"`)
	check("trigger", p.Trigger, is(trigger), fmt.Sprintf("%q", trigger))
	check("custom_instructions", p.CustomInstructions, is(instructions), fmt.Sprintf("%q", instructions))
	check("cwd", p.Cwd, is(cwd), fmt.Sprintf("%q", cwd))
	if sessionID == "" {
		check("session_id", p.SessionID, func(s string) bool { return s != "" }, "a session id")
	} else {
		check("session_id", p.SessionID, is(sessionID), fmt.Sprintf("%q", sessionID))
	}
	check("transcript_path", p.TranscriptPath, filepath.IsAbs, "an absolute path")
	return strings.Join(bad, "; ")
}

// shQuote quotes s as one bash word.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

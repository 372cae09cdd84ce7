// Package hookstest holds the test fixtures shared by the tests of command
// hooks (plugins/hooks as the agent and the harness CLI drive it): a bash
// hook script, written the way Claude Code users write one, that records
// every event payload it reads on stdin and answers by rules (on the payload
// and, like the loop hooks of Stop, on the transcript it names), and the
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
	// LastAssistant, when not empty, are substrings that the last line with
	// "role":"assistant" of the file at the payload's transcript_path must
	// also contain, literally and in any order, as a loop hook reads it
	// when the hook runs. Without that file or those substrings the rule
	// does not match and the next rule is tried.
	LastAssistant []string
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
// matches (the payload, and the transcript for [Rule.LastAssistant]); when none matches it prints nothing and exits 0. A
// rule without Contains fails the test.
func NewScript(t testing.TB, rules ...Rule) *Script {
	t.Helper()
	dir := t.TempDir()
	s := &Script{Path: filepath.Join(dir, "hook.sh"), payloads: filepath.Join(dir, "payloads")}
	var b strings.Builder
	b.WriteString("#!/usr/bin/env bash\ninput=$(cat)\n")
	fmt.Fprintf(&b, "printf '%%s\\n' \"$input\" >> %s\n", shQuote(s.payloads))
	b.WriteString(lastAssistantFunc)
	b.WriteString("case \"$input\" in\n")
	for i, r := range rules {
		if len(r.Contains) == 0 {
			t.Fatalf("hookstest: rule %d has no Contains", i)
		}
		writeRule(&b, r)
	}
	b.WriteString("esac\nexit 0\n")
	if err := os.WriteFile(s.Path, []byte(b.String()), 0o700); err != nil {
		t.Fatal(err)
	}
	return s
}

// lastAssistantFunc defines the bash function last_assistant: it succeeds
// when the last line with "role":"assistant" of the file at the payload's
// transcript_path contains every argument.
const lastAssistantFunc = `last_assistant() {
  local tp last s
  tp=$(printf '%s' "$input" | sed -n 's/.*"transcript_path":"\([^"]*\)".*/\1/p')
  [ -f "$tp" ] || return 1
  last=$(grep -F '"role":"assistant"' "$tp" | tail -1)
  for s in "$@"; do [[ $last == *"$s"* ]] || return 1; done
}
`

// writeRule writes r as a branch of the script's case statement. A rule
// with LastAssistant answers only when last_assistant succeeds and
// otherwise goes on to test the next patterns (bash's ";;&").
func writeRule(b *strings.Builder, r Rule) {
	pattern := "*"
	for _, c := range r.Contains {
		pattern += shQuote(c) + "*"
	}
	var answer strings.Builder
	if r.Stdout != "" {
		fmt.Fprintf(&answer, " printf '%%s\\n' %s;", shQuote(r.Stdout))
	}
	if r.Stderr != "" {
		fmt.Fprintf(&answer, " printf '%%s\\n' %s >&2;", shQuote(r.Stderr))
	}
	fmt.Fprintf(&answer, " exit %d", r.Exit)
	if len(r.LastAssistant) == 0 {
		fmt.Fprintf(b, "  %s)%s ;;\n", pattern, answer.String())
		return
	}
	args := make([]string, len(r.LastAssistant))
	for i, s := range r.LastAssistant {
		args[i] = shQuote(s)
	}
	fmt.Fprintf(b, "  %s) if last_assistant %s; then%s; fi ;;&\n", pattern, strings.Join(args, " "), answer.String())
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

package permission

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Mode is the permission mode: what happens to a call no rule decides.
type Mode string

// The permission modes (Claude Code's names; `bypass` is its bypassPermissions).
const (
	// ModeDefault allows read-only tools and asks for everything else.
	ModeDefault Mode = "default"
	// ModeAcceptEdits also allows the edit tools (write, edit) without asking.
	ModeAcceptEdits Mode = "acceptEdits"
	// ModePlan denies every tool that is not read-only, whatever the allow rules say.
	ModePlan Mode = "plan"
	// ModeBypass allows everything no deny rule forbids; ask rules are not consulted.
	ModeBypass Mode = "bypass"
)

// Valid reports whether m is one of the four modes.
func (m Mode) Valid() bool {
	switch m {
	case ModeDefault, ModeAcceptEdits, ModePlan, ModeBypass:
		return true
	}
	return false
}

// Decision is the outcome of evaluating a call, ordered by precedence:
// Deny > Ask > Allow.
type Decision int

// The decisions, weakest first so that max() is precedence.
const (
	Allow Decision = iota
	Ask
	Deny
)

// String returns "allow", "ask" or "deny".
func (d Decision) String() string {
	switch d {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return fmt.Sprintf("Decision(%d)", int(d))
}

// Verdict is the result of [Policy.Evaluate].
type Verdict struct {
	// Decision is allow, ask or deny.
	Decision Decision
	// Rule is the rule that decided (as written), or "" when the mode decided.
	Rule string
	// Reason explains the decision in words the model and the user both read;
	// empty for Allow.
	Reason string
	// Suggestion is a rule that would allow this call without asking (set for Ask).
	Suggestion string
}

// Call is what a policy evaluates: the tool name and its arguments as JSON.
type Call struct {
	// Tool is the tool's name as registered.
	Tool string
	// Args is the arguments object as JSON.
	Args json.RawMessage
	// Cwd is the working directory of the calling session; "" uses the policy's.
	Cwd string
	// ReadOnly is set when the tool itself declares that it changes nothing
	// (tools.WithReadOnly, e.g. an MCP tool with readOnlyHint); it counts
	// like a name in Spec.ReadOnly.
	ReadOnly bool
}

// Spec is everything a policy is built from; the plugin's Config carries it.
type Spec struct {
	Mode  Mode
	Allow []string
	Ask   []string
	Deny  []string
	// Cwd is the directory relative path patterns and arguments resolve against.
	Cwd string
	// ShellTools maps a shell tool's name to its command argument (bash → command).
	ShellTools map[string]string
	// FileTools maps a file tool's name to its path argument (read → file_path).
	FileTools map[string]string
	// FileToolDefaultPath is the path used when a file tool's path argument is
	// absent (grep and glob search the working directory): tool → path.
	FileToolDefaultPath map[string]string
	// ReadOnly names the tools that change nothing.
	ReadOnly []string
	// EditTools names the tools acceptEdits allows.
	EditTools []string
}

// Policy is a compiled, immutable rule set; safe for concurrent use.
type Policy struct {
	spec              Spec
	mode              Mode
	allow, ask, deny  []Rule
	cwd, home         string
	shell, file       map[string]string
	fileDefault       map[string]string
	readOnly, editing map[string]bool
}

// New compiles a policy. Errors name the offending field (`deny[2]: …`).
func New(s Spec) (*Policy, error) {
	if s.Mode == "" {
		s.Mode = ModeDefault
	}
	if !s.Mode.Valid() {
		return nil, fmt.Errorf("mode: %q is not one of default, acceptEdits, plan, bypass", s.Mode)
	}
	p := &Policy{
		spec: s, mode: s.Mode, cwd: s.Cwd,
		shell: lowerKeys(s.ShellTools), file: lowerKeys(s.FileTools), fileDefault: lowerKeys(s.FileToolDefaultPath),
		readOnly: lowerSet(s.ReadOnly), editing: lowerSet(s.EditTools),
	}
	var err error
	if p.allow, err = parseRules("allow", s.Allow); err != nil {
		return nil, err
	}
	if p.ask, err = parseRules("ask", s.Ask); err != nil {
		return nil, err
	}
	if p.deny, err = parseRules("deny", s.Deny); err != nil {
		return nil, err
	}
	if p.cwd == "" {
		if p.cwd, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("cwd: %w", err)
		}
	}
	p.cwd = filepath.Clean(p.cwd)
	p.spec.Cwd = p.cwd
	p.home, _ = os.UserHomeDir()
	return p, nil
}

// allowSources returns the allow rules as written.
func (p *Policy) allowSources() []string {
	out := make([]string, len(p.allow))
	for i, r := range p.allow {
		out[i] = r.source
	}
	return out
}

// Mode returns the policy's mode.
func (p *Policy) Mode() Mode { return p.mode }

// ReadOnly reports whether tool is configured as read-only.
func (p *Policy) ReadOnly(tool string) bool { return p.readOnly[strings.ToLower(tool)] }

// subject is what the argument patterns of one call are matched against.
type subject struct {
	kind  string        // "shell", "file" or "other"
	parts []commandPart // shell: one per simple command; other: one with the JSON
	// covered is false when an allow rule can never cover the call (a shell
	// line that does not parse, a missing argument).
	coverable bool
	paths     []string // file: absolute forms (lexical, symlinks resolved)
	cwd       string
}

// Evaluate decides one call. Precedence is fixed: any matching deny rule
// denies; then plan mode denies non-read-only tools; then any matching ask
// rule asks (except in bypass mode); then a call covered by allow rules is
// allowed; otherwise the mode decides.
func (p *Policy) Evaluate(c Call) Verdict {
	sub := p.subjectOf(c)
	for _, r := range p.deny {
		if p.applies(r, c.Tool) && p.anyMatch(r, sub) {
			return Verdict{Decision: Deny, Rule: r.source,
				Reason: fmt.Sprintf("permission denied: rule %q in the deny list matches this call", r.source)}
		}
	}
	readOnly := c.ReadOnly || p.ReadOnly(c.Tool)
	if p.mode == ModePlan && !readOnly {
		return Verdict{Decision: Deny,
			Reason: fmt.Sprintf("permission denied: plan mode allows only read-only tools, and %q is not read-only", c.Tool)}
	}
	if p.mode != ModeBypass {
		for _, r := range p.ask {
			if p.applies(r, c.Tool) && p.anyMatch(r, sub) {
				return Verdict{Decision: Ask, Rule: r.source, Suggestion: p.suggest(c.Tool, sub),
					Reason: fmt.Sprintf("tool %q requires approval: rule %q is in the ask list", c.Tool, r.source)}
			}
		}
	}
	if p.covered(c.Tool, sub) {
		return Verdict{Decision: Allow}
	}
	switch {
	case readOnly, p.mode == ModeBypass, p.mode == ModeAcceptEdits && p.editing[strings.ToLower(c.Tool)]:
		return Verdict{Decision: Allow}
	}
	return Verdict{Decision: Ask, Suggestion: p.suggest(c.Tool, sub),
		Reason: fmt.Sprintf("tool %q requires approval: no allow rule covers this call (permission mode %s)", c.Tool, p.mode)}
}

// ReadDenied reports the deny rule, as written, that forbids reading the file
// at path with the read tool, if there is one. Search tools use it, through
// [tools.ReadPolicy], to withhold such files from a search of a directory.
// Ask rules and the mode are not consulted: only an explicit denial hides a
// file. Without a read tool among the file tools it denies nothing.
func (p *Policy) ReadDenied(path string) (string, bool) {
	key, ok := p.file["read"]
	if !ok || len(p.deny) == 0 {
		return "", false
	}
	args, err := json.Marshal(map[string]string{key: path})
	if err != nil {
		return "", false
	}
	sub := p.subjectOf(Call{Tool: "read", Args: args})
	for _, r := range p.deny {
		if p.applies(r, "read") && p.anyMatch(r, sub) {
			return r.source, true
		}
	}
	return "", false
}

// applies reports whether a deny or ask rule concerns tool. Besides its own
// tool, a rule on the read tool also governs the other read-only file tools
// (grep, glob) by their path, as Claude Code applies Read rules to Grep and
// Glob: `read(~/.ssh/**)` also refuses `grep` with path `~/.ssh`. A search
// of a directory that merely contains a denied file is filtered by the
// search tool instead (see [Policy.ReadDenied]).
func (p *Policy) applies(r Rule, tool string) bool {
	if r.matchesTool(tool) {
		return true
	}
	t := strings.ToLower(tool)
	_, isFile := p.file[t]
	return isFile && p.readOnly[t] && t != "read" && r.matchesTool("read")
}

// subjectOf extracts the matchable forms of a call.
func (p *Policy) subjectOf(c Call) subject {
	name := strings.ToLower(c.Tool)
	cwd := p.cwd
	if c.Cwd != "" {
		cwd = filepath.Clean(c.Cwd)
	}
	var args map[string]any
	_ = json.Unmarshal(c.Args, &args)
	if key, ok := p.shell[name]; ok {
		line, _ := args[key].(string)
		parts, parsed := splitCommand(line)
		// The raw line is always one more thing a deny or ask rule may match.
		all := append(parts, commandPart{Forms: []string{strings.TrimSpace(line)}})
		return subject{kind: "shell", parts: all, coverable: parsed && len(parts) > 0}
	}
	if key, ok := p.file[name]; ok {
		raw, isString := args[key].(string)
		if !isString || raw == "" {
			raw, isString = p.fileDefault[name], p.fileDefault[name] != ""
		}
		if !isString {
			return subject{kind: "file", cwd: cwd}
		}
		return subject{kind: "file", paths: pathForms(raw, cwd, p.home), coverable: true, cwd: cwd}
	}
	return subject{kind: "other", parts: []commandPart{{Forms: []string{canonicalJSON(c.Args)}}}, coverable: true}
}

// anyMatch reports whether r matches any form of any part (deny, ask).
func (p *Policy) anyMatch(r Rule, s subject) bool {
	if !r.hasArg {
		return true
	}
	if s.kind == "file" {
		for _, f := range s.paths {
			if r.matchPath(f, s.cwd, p.home) {
				return true
			}
		}
		return false
	}
	for _, part := range s.parts {
		if part.Written != "" && r.matchText(part.Written) {
			return true
		}
		for _, f := range part.Forms {
			if r.matchText(f) {
				return true
			}
		}
	}
	return false
}

// covered reports whether allow rules cover the call: for a shell line every
// simple command must be matched (in every form) by some allow rule; for a
// file every path form by one rule.
func (p *Policy) covered(tool string, s subject) bool {
	var rules []Rule
	for _, r := range p.allow {
		if r.matchesTool(tool) {
			if !r.hasArg {
				return true
			}
			rules = append(rules, r)
		}
	}
	if len(rules) == 0 || !s.coverable {
		return false
	}
	switch s.kind {
	case "file":
		for _, r := range rules {
			if allPaths(r, s, p.home) {
				return true
			}
		}
		return false
	case "shell":
		for _, part := range s.parts[:len(s.parts)-1] { // the last part is the raw line
			if !partCovered(rules, part) {
				return false
			}
		}
		return true
	}
	return partCovered(rules, s.parts[0])
}

func allPaths(r Rule, s subject, home string) bool {
	for _, f := range s.paths {
		if !r.matchPath(f, s.cwd, home) {
			return false
		}
	}
	return len(s.paths) > 0
}

func partCovered(rules []Rule, part commandPart) bool {
	for _, r := range rules {
		if part.Writes {
			if r.redirText != nil && r.redirText.match(squeezeRedirections(part.Written)) {
				return true
			}
			continue
		}
		all := true
		for _, f := range part.Forms {
			all = all && r.matchText(f)
		}
		if all {
			return true
		}
	}
	return false
}

// suggest proposes a rule that would allow the call, for the ask reason.
func (p *Policy) suggest(tool string, s subject) string {
	name := strings.ToLower(tool)
	switch s.kind {
	case "shell":
		for _, part := range s.parts {
			words := strings.Fields(part.Forms[len(part.Forms)-1])
			if len(words) == 0 {
				continue
			}
			prefix := words[0]
			if len(words) > 1 && !strings.HasPrefix(words[1], "-") && !strings.ContainsAny(words[1], "/.$*?") {
				prefix += " " + words[1]
			}
			return fmt.Sprintf("%s(%s *)", name, prefix)
		}
	case "file":
		if len(s.paths) > 0 {
			if rel, err := filepath.Rel(s.cwd, s.paths[0]); err == nil && !strings.HasPrefix(rel, "..") {
				return fmt.Sprintf("%s(%s)", name, filepath.ToSlash(rel))
			}
			return fmt.Sprintf("%s(%s)", name, filepath.ToSlash(s.paths[0]))
		}
	}
	return name
}

// pathForms returns the absolute lexical path and, when different, the path
// with symlinks resolved (of its longest existing prefix).
func pathForms(raw, cwd, home string) []string {
	if strings.HasPrefix(raw, "~/") && home != "" {
		raw = filepath.Join(home, raw[2:])
	}
	abs := raw
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(cwd, abs)
	}
	abs = filepath.Clean(abs)
	forms := []string{abs}
	if resolved := resolveExisting(abs); resolved != abs {
		forms = append(forms, resolved)
	}
	return forms
}

// resolveExisting resolves symlinks in the longest existing prefix of abs.
func resolveExisting(abs string) string {
	dir, rest := abs, ""
	for {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// canonicalJSON re-encodes a JSON document compactly with sorted object keys
// (encoding/json sorts map keys); invalid JSON is returned compacted as-is.
func canonicalJSON(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err == nil {
		var out bytes.Buffer
		enc := json.NewEncoder(&out)
		enc.SetEscapeHTML(false)
		if enc.Encode(v) == nil {
			return strings.TrimSuffix(out.String(), "\n")
		}
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) == nil {
		return b.String()
	}
	return string(raw)
}

func lowerKeys(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[strings.ToLower(k)] = v
	}
	return out
}

func lowerSet(names []string) map[string]bool {
	out := make(map[string]bool, len(names))
	for _, n := range names {
		out[strings.ToLower(n)] = true
	}
	return out
}

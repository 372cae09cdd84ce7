package permission

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/dshgo/harness/services/subprocess/sandbox"
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
	// ModeDontAsk is the default mode without anyone asked: what would be
	// asked is denied (Claude Code's dontAsk). Allow rules and read-only
	// tools still run.
	ModeDontAsk Mode = "dontAsk"
)

// Valid reports whether m is one of the five modes.
func (m Mode) Valid() bool {
	switch m {
	case ModeDefault, ModeAcceptEdits, ModePlan, ModeBypass, ModeDontAsk:
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
	// Suggestions are rules that, added to the allow list together, would
	// allow this call without asking (set for Ask when such rules exist;
	// each was checked against the call). Empty when no allow rule can
	// cover the call (an unknown program, a workdir outside the workspace,
	// an ask rule).
	Suggestions []string
	// Unknown is set when the call was asked because a part of a shell
	// command cannot be known statically (see [Call.Sandboxed]).
	Unknown bool
	// ByMode is set for an Ask that only the permission mode made: no rule
	// matched, the command is known and its workdir inside the workspace.
	// An explicit approval (a PreToolUse hook's "allow") lifts such an ask,
	// as in Claude Code; it lifts no ask a rule made.
	ByMode bool
	// Escalated is set for an Ask of a call that asks to leave the sandbox
	// and that no `unsandboxed` allow rule covers; Suggestions are then
	// such rules.
	Escalated bool
	// Protected is the path, symlinks resolved, of a write to a protected
	// path (see [sandbox.ProtectedPaths]) that made this an ask; "" otherwise.
	Protected string
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
	// Internal is set when the tool declares that it changes only the
	// agent's own state (tools.WithInternal: todo_write, task): it runs
	// without asking in every mode but plan, as in Claude Code.
	Internal bool
	// Sandboxed is set when the call will run inside an enforced
	// workspace-write sandbox (the permission plugin sets it for shell
	// calls from the subprocess service's sandbox policy). A sandboxed
	// shell call whose program is not static is not asked for that reason,
	// and with [Spec.AutoAllowSandboxed] it is allowed unless a deny or ask
	// rule matches.
	Sandboxed bool
	// Escalated is set when a shell call asks to run outside the sandbox
	// (`"sandbox":"off"`). Leaving the sandbox is a person's decision: such
	// a call is asked in every mode but bypass, and only an allow rule that
	// says so (`bash(make deploy) unsandboxed`) covers it.
	Escalated bool
	// Roots are directories besides Cwd that count as the workspace (the
	// sandbox's writable roots): acceptEdits writes there without asking
	// and a bash workdir there is not "outside the workspace".
	Roots []string
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
	// EditTools names the tools acceptEdits allows (inside the workspace).
	EditTools []string
	// ShellWorkdir maps a shell tool's name to its working-directory
	// argument (bash → workdir): relative paths in the command resolve
	// against it, and a workdir outside the workspace is asked.
	ShellWorkdir map[string]string
	// AutoAllowSandboxed allows a shell call that runs in an enforced
	// workspace-write sandbox ([Call.Sandboxed]) without asking, unless a
	// deny or ask rule matches.
	AutoAllowSandboxed bool
	// URLTools maps a web tool's name to its URL argument (web_fetch →
	// url): a rule `web_fetch(domain:HOST)` matches the URL's host
	// (text glob: `domain:*.example.com` for its subdomains).
	URLTools map[string]string
}

// Policy is a compiled, immutable rule set; safe for concurrent use.
type Policy struct {
	spec              Spec
	mode              Mode
	allow, ask, deny  []Rule
	cwd, home         string
	shell, file       map[string]string
	url               map[string]string
	fileDefault       map[string]string
	workdirArg        map[string]string
	readOnly, editing map[string]bool
}

// New compiles a policy. Errors name the offending field (`deny[2]: …`).
func New(s Spec) (*Policy, error) {
	if s.Mode == "" {
		s.Mode = ModeDefault
	}
	if !s.Mode.Valid() {
		return nil, fmt.Errorf("mode: %q is not one of default, acceptEdits, plan, bypass, dontAsk", s.Mode)
	}
	p := &Policy{
		spec: s, mode: s.Mode, cwd: s.Cwd,
		shell: lowerKeys(s.ShellTools), file: lowerKeys(s.FileTools), fileDefault: lowerKeys(s.FileToolDefaultPath),
		workdirArg: lowerKeys(s.ShellWorkdir), url: lowerKeys(s.URLTools),
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

// WithMode returns the policy with mode m instead of its own (the same
// rules, compiled once). m must be valid.
func (p *Policy) WithMode(m Mode) *Policy {
	q := *p
	q.mode, q.spec.Mode = m, m
	return &q
}

// Shell reports whether tool is configured as a shell tool.
func (p *Policy) Shell(tool string) bool {
	_, ok := p.shell[strings.ToLower(tool)]
	return ok
}

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
	// workdir is the shell call's working directory (absolute), "" when
	// the call gives none; outside is set when it lies outside the workspace.
	workdir  string
	workdirs []string // workdir's absolute forms, checked against read deny rules
	outside  bool
	// unknown is the reason of the first unknown part ("" when none).
	unknown string
	// reads and writes are the absolute forms of the static targets of
	// read and write redirections.
	reads, writes []string
	// domain is a URL tool's host ("" for other calls).
	domain string
}

// Evaluate decides one call. Precedence is fixed: any matching deny rule
// denies; then plan mode denies non-read-only tools; then a file tool
// writing a protected path ([sandbox.IsProtectedPath]) asks (except in bypass
// mode), whatever the allow rules say; then any matching ask
// rule asks (except in bypass mode); then a shell call whose workdir is
// outside the workspace, or (unless it runs in the sandbox) with a part that
// cannot be known statically, is asked in every mode; then a shell call that
// asks to leave the sandbox is asked (except in bypass mode) unless allow
// rules written with `unsandboxed` cover it; then a call covered by allow
// rules is allowed; then a read-only or internal tool, a sandboxed shell
// call when AutoAllowSandboxed is set, and in acceptEdits an edit inside the
// workspace are allowed; otherwise the mode decides.
func (p *Policy) Evaluate(c Call) Verdict {
	sub := p.subjectOf(c)
	r, ok := p.denied(c.Tool, sub)
	if !ok {
		r, ok = p.mcpFileRule(p.deny, c, sub)
	}
	if ok {
		return Verdict{Decision: Deny, Rule: r.source,
			Reason: fmt.Sprintf("permission denied: rule %q in the deny list matches this call", r.source)}
	}
	if sub.kind == "shell" && sub.unknown == "" {
		sub.unknown = p.uncheckable(c.Tool, sub)
	}
	readOnly := c.ReadOnly || p.ReadOnly(c.Tool)
	if p.mode == ModePlan && !readOnly {
		return Verdict{Decision: Deny,
			Reason: fmt.Sprintf("permission denied: plan mode allows only read-only tools, and %q is not read-only", c.Tool)}
	}
	if p.mode != ModeBypass && !readOnly {
		if path := p.protectedWrite(c, sub); path != "" {
			return Verdict{Decision: Ask, Protected: path,
				Reason: fmt.Sprintf("tool %q requires approval: it writes %s, a protected path (harness configuration, hooks or git configuration the harness trusts later), which is asked in every permission mode but bypass, whatever the allow rules say", c.Tool, path)}
		}
	}
	if p.mode != ModeBypass {
		for _, r := range p.ask {
			if p.applies(r, c.Tool) && p.anyMatch(r, sub) {
				return Verdict{Decision: Ask, Rule: r.source,
					Reason: fmt.Sprintf("tool %q requires approval: rule %q is in the ask list", c.Tool, r.source)}
			}
		}
		if r, ok := p.mcpFileRule(p.ask, c, sub); ok {
			return Verdict{Decision: Ask, Rule: r.source,
				Reason: fmt.Sprintf("tool %q requires approval: rule %q is in the ask list", c.Tool, r.source)}
		}
	}
	if sub.kind == "shell" {
		if sub.outside {
			return Verdict{Decision: Ask,
				Reason: fmt.Sprintf("tool %q requires approval: its workdir %s is outside the workspace %s (no rule or mode allows that)", c.Tool, sub.workdir, sub.cwd)}
		}
		if sub.unknown != "" && !c.Sandboxed {
			return Verdict{Decision: Ask, Unknown: true,
				Reason: fmt.Sprintf("tool %q requires approval: %s, so no rule can tell what the command runs (asked in every permission mode unless the command runs in the sandbox)", c.Tool, sub.unknown)}
		}
	}
	if c.Escalated && sub.kind == "shell" && p.mode != ModeBypass {
		if p.covered(c.Tool, sub, true) {
			return Verdict{Decision: Allow}
		}
		return Verdict{Decision: Ask, Escalated: true, Suggestions: p.suggest(c, sub),
			Reason: fmt.Sprintf("tool %q requires approval: it asks to run outside the sandbox, which is a person's decision: asked in every permission mode but bypass, whatever the allow rules say, unless an allow rule says `unsandboxed`", c.Tool)}
	}
	if p.covered(c.Tool, sub, false) {
		return Verdict{Decision: Allow}
	}
	switch {
	case readOnly, p.mode == ModeBypass, c.Internal,
		sub.kind == "shell" && c.Sandboxed && p.spec.AutoAllowSandboxed,
		p.mode == ModeAcceptEdits && p.editing[strings.ToLower(c.Tool)] && p.inWorkspace(sub, c):
		return Verdict{Decision: Allow}
	}
	why := fmt.Sprintf("no allow rule covers this call (permission mode %s)", p.mode)
	switch {
	case p.mode == ModeAcceptEdits && p.editing[strings.ToLower(c.Tool)]:
		why = "it writes outside the working directory and the sandbox's writable roots, and no allow rule covers it (permission mode acceptEdits)"
	}
	return Verdict{Decision: Ask, Suggestions: p.suggest(c, sub), ByMode: true,
		Reason: fmt.Sprintf("tool %q requires approval: %s", c.Tool, why)}
}

// protectedWrite returns the path a file tool that is not read-only
// writes, when that path (lexically, or with every symlink resolved) is
// protected; "" otherwise.
func (p *Policy) protectedWrite(c Call, sub subject) string {
	if sub.kind != "file" {
		return ""
	}
	if _, ok := p.file[strings.ToLower(c.Tool)]; !ok {
		return ""
	}
	roots := p.workspaceRoots(sub.cwd, c.Roots)
	forms := append([]string(nil), sub.paths...)
	if len(sub.paths) > 0 {
		forms = append(forms, resolveExisting(sub.paths[0]))
	}
	for _, f := range forms {
		for _, r := range roots {
			if protectedUnder(f, r, roots) {
				return resolveExisting(f)
			}
		}
	}
	return ""
}

// protectedUnder reports whether abs is one of the protected paths of root
// ([sandbox.IsProtected], what the sandbox guards too: the fixed list, git's
// indirection at any depth, and what the repository's configuration
// includes), roots being every workspace root.
func protectedUnder(abs, root string, roots []string) bool {
	resolved := make([]string, 0, len(roots))
	for _, r := range roots {
		resolved = append(resolved, resolveExisting(r))
	}
	return sandbox.IsProtected(root, abs, roots) || sandbox.IsProtected(resolveExisting(root), abs, resolved)
}

// denied returns the deny rule that matches the call: by its forms, by the
// targets of its redirections (read rules for `< FILE`, write and edit rules
// for `> FILE`), or by a hard link to a denied file.
func (p *Policy) denied(tool string, sub subject) (Rule, bool) {
	for _, r := range p.deny {
		if p.applies(r, tool) && p.anyMatch(r, sub) {
			return r, true
		}
	}
	for _, target := range []struct {
		tools []string
		paths []string
	}{{[]string{"read"}, sub.reads}, {[]string{"write", "edit"}, sub.writes}, {[]string{"read"}, sub.workdirs}} {
		for _, t := range target.tools {
			if _, isFile := p.file[t]; !isFile || len(target.paths) == 0 {
				continue
			}
			for _, r := range p.deny {
				if !p.applies(r, t) {
					continue
				}
				for _, f := range target.paths {
					if r.matchPath(f, sub.cwd, p.home) {
						return r, true
					}
				}
			}
			for _, f := range target.paths {
				if r, ok := p.linkDenied(t, f, sub.cwd); ok {
					return r, true
				}
			}
		}
	}
	if sub.kind == "file" && len(sub.paths) > 0 {
		if r, ok := p.linkDenied(tool, sub.paths[len(sub.paths)-1], sub.cwd); ok {
			return r, true
		}
	}
	return Rule{}, false
}

// uncheckable says why a deny or ask rule that names options cannot be
// checked against a part ("" when every one can): the part runs the rule's
// program with arguments that are not static (`opt=-rf; rm $opt v` against
// `bash(rm -rf *)`). Such a call is treated as unknown.
func (p *Policy) uncheckable(tool string, sub subject) string {
	for _, part := range sub.parts {
		if !part.Dynamic {
			continue
		}
		for _, list := range [][]Rule{p.deny, p.ask} {
			for _, r := range list {
				if r.options == nil || !p.applies(r, tool) {
					continue
				}
				for _, argv := range part.Argvs {
					if r.options.leads(argv) {
						return fmt.Sprintf("the arguments of %q are not all static, so rule %q cannot be checked", argv[0], r.source)
					}
				}
			}
		}
	}
	return ""
}

// inWorkspace reports whether the path of a file call, symlinks resolved,
// lies inside the working directory or one of the call's roots.
func (p *Policy) inWorkspace(sub subject, c Call) bool {
	if sub.kind != "file" {
		return true
	}
	if len(sub.paths) == 0 {
		return false
	}
	// What counts is where the write lands: the path with every symlink
	// (also a dangling last one) resolved.
	return within(resolveExisting(sub.paths[0]), p.workspaceRoots(sub.cwd, c.Roots))
}

// workspaceRoots is cwd and roots, absolute, each also with symlinks
// resolved.
func (p *Policy) workspaceRoots(cwd string, roots []string) []string {
	var out []string
	for _, r := range append([]string{cwd}, roots...) {
		if strings.HasPrefix(r, "~/") && p.home != "" {
			r = filepath.Join(p.home, r[2:])
		}
		if !filepath.IsAbs(r) {
			r = filepath.Join(cwd, r)
		}
		r = filepath.Clean(r)
		out = append(out, r)
		if res := resolveExisting(r); res != r {
			out = append(out, res)
		}
	}
	return out
}

// within reports whether abs is one of roots or below one.
func within(abs string, roots []string) bool {
	for _, r := range roots {
		if abs == r || strings.HasPrefix(abs, strings.TrimSuffix(r, string(filepath.Separator))+string(filepath.Separator)) {
			return true
		}
	}
	return false
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

// applies reports whether a rule concerns tool, with Claude Code's reading
// of rule names (the same for allow, ask and deny rules):
//   - the tool's own name, and for a server-level MCP rule (`mcp__github`)
//     every tool of the server ([Rule.matchesTool]);
//   - a rule on the edit tool also governs every other edit tool that is a
//     file tool (Spec.EditTools: write, and any multi-edit or notebook tool
//     configured so) by its path, as Claude Code applies Edit rules to every
//     built-in tool that edits files: `edit(./tsconfig.json)` in deny also
//     refuses `write` of that file;
//   - a rule on the read tool also governs the other read-only file tools
//     (grep, glob) by their path, as Claude Code applies Read rules to Grep
//     and Glob: `read(~/.ssh/**)` also refuses `grep` with path `~/.ssh`. A
//     search of a directory that merely contains a denied file is filtered
//     by the search tool instead (see [Policy.ReadDenied]).
func (p *Policy) applies(r Rule, tool string) bool {
	if r.matchesTool(tool) {
		return true
	}
	t := strings.ToLower(tool)
	if _, isFile := p.file[t]; !isFile {
		return false
	}
	switch {
	case p.readOnly[t]:
		return t != "read" && r.matchesTool("read")
	case p.editing[t]:
		return t != "edit" && r.matchesTool("edit")
	}
	return false
}

// mcpPathArgs are the arguments of an MCP tool that name files (those of
// the official filesystem server: path, paths, source, destination).
var mcpPathArgs = []string{"path", "paths", "source", "destination"}

// mcpFileRule returns the rule of list (deny or ask rules) with a path
// pattern that governs an MCP tool's call by the files its arguments name,
// as Claude Code's Read rules cover the tools that read files: a rule on
// the read tool for a tool that declares itself read-only (readOnlyHint),
// a rule on the edit tool for any other. Only deny and ask rules are read
// so: an allow rule never covers an MCP tool by its path.
func (p *Policy) mcpFileRule(list []Rule, c Call, sub subject) (Rule, bool) {
	if sub.kind != "other" || !strings.HasPrefix(strings.ToLower(c.Tool), "mcp__") {
		return Rule{}, false
	}
	governing := "edit"
	if c.ReadOnly || p.ReadOnly(c.Tool) {
		governing = "read"
	}
	var rules []Rule
	for _, r := range list {
		if r.hasArg && r.matchesTool(governing) {
			rules = append(rules, r)
		}
	}
	if len(rules) == 0 {
		return Rule{}, false // no path to resolve
	}
	var args map[string]any
	if json.Unmarshal(c.Args, &args) != nil {
		return Rule{}, false
	}
	var paths []string
	for _, k := range mcpPathArgs {
		switch v := args[k].(type) {
		case string:
			if v != "" {
				paths = append(paths, pathForms(v, p.cwdOf(c), p.home)...)
			}
		case []any:
			for _, x := range v {
				if s, ok := x.(string); ok && s != "" {
					paths = append(paths, pathForms(s, p.cwdOf(c), p.home)...)
				}
			}
		}
	}
	for _, r := range rules {
		for _, f := range paths {
			if r.matchPath(f, p.cwdOf(c), p.home) {
				return r, true
			}
		}
	}
	return Rule{}, false
}

// cwdOf is the working directory a call's relative paths resolve against.
func (p *Policy) cwdOf(c Call) string {
	if c.Cwd != "" {
		return filepath.Clean(c.Cwd)
	}
	return p.cwd
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
		return p.shellSubject(name, key, args, cwd, c.Roots)
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
	if key, ok := p.url[name]; ok {
		if host := urlHost(args[key]); host != "" {
			return subject{kind: "other", domain: host, coverable: true,
				parts: []commandPart{{Forms: []string{"domain:" + host}, Extra: []string{canonicalJSON(c.Args)}}}}
		}
	}
	return subject{kind: "other", parts: []commandPart{{Forms: []string{canonicalJSON(c.Args)}}}, coverable: true}
}

// urlHost is the lower-case host of an http or https URL argument, ""
// when v is not one.
func urlHost(v any) string {
	raw, _ := v.(string)
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	return strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
}

// shellSubject analyses a shell call: its parts, its workdir, and the
// targets of its redirections resolved against the workdir.
func (p *Policy) shellSubject(name, key string, args map[string]any, cwd string, roots []string) subject {
	line, _ := args[key].(string)
	parts, parsed := splitCommand(line)
	sub := subject{kind: "shell", cwd: cwd, coverable: parsed && len(parts) > 0}
	base := cwd
	raw := commandPart{Forms: []string{strings.TrimSpace(line)}}
	if wkey, ok := p.workdirArg[name]; ok {
		if wd, _ := args[wkey].(string); wd != "" {
			if strings.HasPrefix(wd, "~/") && p.home != "" || wd == "~" && p.home != "" {
				wd = filepath.Join(p.home, strings.TrimPrefix(wd[1:], "/"))
			}
			if !filepath.IsAbs(wd) {
				wd = filepath.Join(cwd, wd)
			}
			base = filepath.Clean(wd)
			sub.workdir = base
			sub.workdirs = pathForms(base, cwd, p.home)
			roots := p.workspaceRoots(cwd, roots)
			sub.outside = !within(resolveExisting(base), roots)
			raw.Extra = []string{"cd " + base, "cd " + base + "/"}
		}
	}
	moved := sub.workdir != ""
	for i := range parts {
		part := &parts[i]
		if part.Unknown != "" && sub.unknown == "" {
			sub.unknown = part.Unknown
		}
		for _, t := range part.ReadTargets {
			sub.reads = append(sub.reads, pathForms(t, base, p.home)...)
		}
		for _, t := range part.WriteTargets {
			sub.writes = append(sub.writes, pathForms(t, base, p.home)...)
		}
		if moved {
			for _, argv := range part.Argvs {
				part.Extra = appendForm(part.Extra, strings.Join(resolveOperands(argv, base), " "))
			}
		}
		// `cd DIR` (or pushd) moves later parts: their relative operands and
		// targets resolve against DIR, and DIR itself is seen as a directory
		// (`cd ~/.ssh` is also `cd /home/me/.ssh/`) and checked against the
		// deny rules on read.
		if len(part.Argvs) > 0 && len(part.Argvs[0]) == 2 && (part.Argvs[0][0] == "cd" || part.Argvs[0][0] == "pushd") {
			dir := part.Argvs[0][1]
			if strings.HasPrefix(dir, "~/") && p.home != "" || dir == "~" && p.home != "" {
				dir = filepath.Join(p.home, strings.TrimPrefix(dir[1:], "/"))
			}
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(base, dir)
			}
			base, moved = filepath.Clean(dir), true
			part.Extra = appendForm(part.Extra, "cd "+base+"/")
			sub.workdirs = append(sub.workdirs, pathForms(base, cwd, p.home)...)
		}
	}
	sub.parts = append(parts, raw) // the raw line is one more thing a deny or ask rule may match
	return sub
}

// resolveOperands returns argv with every relative operand (not an option,
// not absolute, not `~/…`) joined to dir, so rules see the paths a command
// given a workdir works on.
func resolveOperands(argv []string, dir string) []string {
	out := make([]string, len(argv))
	copy(out, argv)
	for i := 1; i < len(out); i++ {
		a := out[i]
		if a == "" || strings.HasPrefix(a, "-") || strings.HasPrefix(a, "~") || filepath.IsAbs(a) {
			continue
		}
		out[i] = filepath.Join(dir, a)
	}
	return out
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
		for _, f := range part.Extra {
			if r.matchText(f) {
				return true
			}
		}
		if r.options != nil {
			for _, argv := range part.Argvs {
				if r.options.match(argv) {
					return true
				}
			}
		}
	}
	return false
}

// covered reports whether allow rules cover the call: for a shell line every
// simple command must be matched (in every form) by some allow rule; for a
// file every path form by one rule.
//
// With unsandboxed set (a shell call that asks to leave the sandbox) only
// the allow rules written with the `unsandboxed` suffix count.
func (p *Policy) covered(tool string, s subject, unsandboxed bool) bool {
	var rules []Rule
	for _, r := range p.allow {
		if p.applies(r, tool) && (!unsandboxed || r.unsandboxed) {
			if !r.hasArg {
				return s.kind != "shell" || (s.unknown == "" && !s.outside)
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

// partCovered reports whether one rule covers the part: an unknown part
// never; a part with an option that writes or runs (effectOption) only
// through a rule naming that option; a part that redirects only through a
// rule naming the redirection, matched against the statement as written;
// otherwise a rule matching every form.
func partCovered(rules []Rule, part commandPart) bool {
	if part.Unknown != "" {
		return false
	}
	var effects []string
	for _, argv := range part.Argvs {
		if o := effectOption(argv); o != "" {
			effects = append(effects, o)
		}
	}
	for _, r := range rules {
		if !r.namesOptions(effects) {
			continue
		}
		if part.Writes || part.Reads {
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

// suggest proposes rules that, added to the allow list, would allow the
// call; every proposal is checked against the call with the real matcher,
// so a hint never names a rule that would not help. Nil when no allow rule
// can cover the call.
func (p *Policy) suggest(c Call, s subject) []string {
	name := strings.ToLower(c.Tool)
	var out []string
	switch s.kind {
	case "shell":
		if !s.coverable || s.unknown != "" || s.outside {
			return nil
		}
		// A call that asks to leave the sandbox is covered only by rules
		// that say so; the proposals say so too.
		escalated := c.Escalated && p.mode != ModeBypass
		var rules []Rule
		for _, r := range p.allow {
			if r.matchesTool(c.Tool) && (!escalated || r.unsandboxed) {
				rules = append(rules, r)
			}
		}
		for _, part := range s.parts[:len(s.parts)-1] {
			if partCovered(rules, part) {
				continue
			}
			rule, ok := suggestShellRule(name, part)
			if !ok {
				return nil
			}
			if escalated {
				rule += " " + unsandboxedSuffix
			}
			r, _ := ParseRule(rule)
			rules = append(rules, r)
			out = appendForm(out, rule)
		}
	case "file":
		if len(s.paths) == 0 {
			return nil
		}
		rel, err := filepath.Rel(s.cwd, s.paths[0])
		rule := fmt.Sprintf("%s(%s)", name, escapeGlob(filepath.ToSlash(s.paths[0])))
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			rule = fmt.Sprintf("%s(%s)", name, escapeGlob(filepath.ToSlash(rel)))
		}
		if r, err := ParseRule(rule); err != nil || !allPaths(r, s, p.home) {
			rule = fmt.Sprintf("%s(%s)", name, escapeGlob(filepath.ToSlash(s.paths[len(s.paths)-1])))
			if r, err := ParseRule(rule); err != nil || !allPaths(r, s, p.home) {
				return nil
			}
		}
		out = []string{rule}
	default:
		out = []string{name}
		if s.domain != "" {
			out = []string{fmt.Sprintf("%s(domain:%s)", name, s.domain)}
		}
	}
	if len(out) == 0 {
		return nil
	}
	// The proof: the call with these rules added is allowed.
	spec := p.spec
	spec.Allow = append(append([]string{}, spec.Allow...), out...)
	if q, err := New(spec); err != nil || q.Evaluate(c).Decision != Allow {
		return nil
	}
	return out
}

// suggestShellRule proposes one rule covering part: the program and its
// subcommand followed by ` *`, else the program alone; for a part that
// redirects, that prefix with its exact redirections; the statement as
// written as the last resort. Each candidate is checked with partCovered.
func suggestShellRule(tool string, part commandPart) (string, bool) {
	var candidates []string
	words := strings.Fields(part.Forms[len(part.Forms)-1])
	if part.Writes || part.Reads {
		redirs := redirectionsOf(part.Written)
		if len(words) > 0 && redirs != "" {
			candidates = append(candidates, escapeGlob(words[0])+" * "+escapeGlob(redirs), escapeGlob(words[0])+" "+escapeGlob(redirs))
		}
		candidates = append(candidates, escapeGlob(part.Written))
	} else if len(words) > 0 {
		if len(words) > 1 && !strings.HasPrefix(words[1], "-") && !strings.ContainsAny(words[1], "/.$*?\\'\"") {
			candidates = append(candidates, escapeGlob(words[0]+" "+words[1])+" *")
		}
		candidates = append(candidates, escapeGlob(words[0])+" *")
	}
	for _, cand := range candidates {
		rule := tool + "(" + cand + ")"
		r, err := ParseRule(rule)
		if err == nil && partCovered([]Rule{r}, part) {
			return rule, true
		}
	}
	return "", false
}

// redirectionsOf returns the redirections of a statement as written (the
// words from the first redirection operator on), with the spacing the
// rule matcher uses.
func redirectionsOf(written string) string {
	squeezed := squeezeRedirections(written)
	loc := redirSpacing.FindStringIndex(squeezed)
	if loc == nil {
		return ""
	}
	return strings.TrimSpace(squeezed[loc[0]:])
}

// escapeGlob quotes the text-glob metacharacters of s.
func escapeGlob(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `(`, `\(`, `)`, `\)`)
	return r.Replace(s)
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

// resolveExisting resolves symlinks in the longest existing prefix of abs;
// a dangling symlink is followed to where it points (a write through it
// creates the file there).
func resolveExisting(abs string) string { return resolveDepth(abs, 0) }

func resolveDepth(abs string, n int) string {
	dir, rest := abs, ""
	for {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		if fi, err := os.Lstat(dir); err == nil && fi.Mode()&os.ModeSymlink != 0 && n < 40 {
			if target, err := os.Readlink(dir); err == nil {
				if !filepath.IsAbs(target) {
					target = filepath.Join(filepath.Dir(dir), target)
				}
				return resolveDepth(filepath.Join(filepath.Clean(target), rest), n+1)
			}
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

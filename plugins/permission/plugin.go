package permission

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"weak"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/tools"
	"github.com/dshgo/harness/services/tools/workdir"
)

// Config is the permission plugin's configuration.
type Config struct {
	// Mode decides calls no rule decides: default (read-only tools run;
	// others ask) or acceptEdits (also edits run) or plan (only read-only
	// tools) or bypass (all run) or dontAsk (as default, but what would be
	// asked is denied); deny rules hold in every mode. Claude Code's
	// bypassPermissions is accepted for bypass.
	Mode Mode `yaml:"mode" json:"mode,omitempty" jsonschema:"enum=default,enum=acceptEdits,enum=plan,enum=bypass,enum=bypassPermissions,enum=dontAsk,default=default"`
	// Allow rules let calls run without asking (e.g. bash(go test *) or
	// read(src/**)).
	Allow []string `yaml:"allow" json:"allow,omitempty"`
	// Ask rules require approval, even when an allow rule matches.
	Ask []string `yaml:"ask" json:"ask,omitempty"`
	// Deny rules refuse calls, whatever any other rule, hook or answer says.
	Deny []string `yaml:"deny" json:"deny,omitempty"`
	// Cwd is the directory relative paths and path patterns resolve against;
	// empty means the process's working directory.
	Cwd string `yaml:"cwd" json:"cwd,omitempty"`
	// ShellTools maps each shell tool to its command argument.
	ShellTools map[string]string `yaml:"shellTools" json:"shellTools,omitempty"`
	// FileTools maps each file tool to its path argument.
	FileTools map[string]string `yaml:"fileTools" json:"fileTools,omitempty"`
	// FileToolDefaultPath is the path a file tool works on when its path
	// argument is absent (grep and glob: the working directory).
	FileToolDefaultPath map[string]string `yaml:"fileToolDefaultPath" json:"fileToolDefaultPath,omitempty"`
	// ReadOnlyTools are the tools that change nothing: the default mode runs
	// them without asking and plan mode runs only them.
	ReadOnlyTools []string `yaml:"readOnlyTools" json:"readOnlyTools,omitempty"`
	// EditTools are the tools acceptEdits allows without asking, for paths
	// inside the working directory and the sandbox's writable roots.
	EditTools []string `yaml:"editTools" json:"editTools,omitempty"`
	// ShellWorkdir maps each shell tool to its working-directory argument
	// (tool: argument); relative paths in the command resolve against it and a
	// workdir outside the workspace is asked.
	ShellWorkdir map[string]string `yaml:"shellWorkdir" json:"shellWorkdir,omitempty"`
	// AutoAllowSandboxed allows a shell call that runs in an enforced
	// workspace-write sandbox without asking, unless a deny or ask rule
	// matches (default true).
	AutoAllowSandboxed bool `yaml:"autoAllowSandboxed" json:"autoAllowSandboxed" jsonschema:"default=true"`
	// AdditionalDirectories count as the workspace besides the working
	// directory (Claude Code's permissions.additionalDirectories): edit
	// tools write there without asking in acceptEdits, and a bash workdir
	// there is not outside the workspace. Relative paths resolve against
	// Cwd; deny and ask rules still apply there.
	AdditionalDirectories []string `yaml:"additionalDirectories" json:"additionalDirectories,omitempty"`
	// URLTools maps each web tool to its URL argument (default web_fetch:
	// url): `web_fetch(domain:HOST)` rules match the URL's host.
	URLTools map[string]string `yaml:"urlTools" json:"urlTools,omitempty"`
}

// SetDefaults classifies the standard tool set: bash is the shell tool;
// read, write, edit (file_path) and grep, glob (path, default ".") are file
// tools; read, grep, glob are read-only; write and edit are edit tools.
func (c *Config) SetDefaults() {
	c.Mode = ModeDefault
	c.ShellTools = map[string]string{"bash": "command"}
	c.FileTools = map[string]string{"read": "file_path", "write": "file_path", "edit": "file_path", "grep": "path", "glob": "path"}
	c.FileToolDefaultPath = map[string]string{"grep": ".", "glob": "."}
	c.ReadOnlyTools = []string{"read", "grep", "glob"}
	c.EditTools = []string{"write", "edit"}
	c.ShellWorkdir = map[string]string{"bash": "workdir"}
	c.AutoAllowSandboxed = true
	c.URLTools = map[string]string{"web_fetch": "url"}
}

// Validate compiles the rules; errors name the list and index (`deny[1]: …`).
func (c Config) Validate() error {
	_, err := New(c.spec())
	return err
}

func (c Config) spec() Spec {
	mode := c.Mode
	if mode == "bypassPermissions" {
		mode = ModeBypass
	}
	return Spec{
		Mode: mode, Allow: c.Allow, Ask: c.Ask, Deny: c.Deny, Cwd: c.Cwd,
		ShellTools: c.ShellTools, FileTools: c.FileTools, FileToolDefaultPath: c.FileToolDefaultPath,
		ReadOnly: c.ReadOnlyTools, EditTools: c.EditTools,
		ShellWorkdir: c.ShellWorkdir, AutoAllowSandboxed: c.AutoAllowSandboxed, URLTools: c.URLTools,
	}
}

// additional returns AdditionalDirectories made absolute against Cwd (the
// process's working directory when empty), with a leading ~/ expanded.
func (c Config) additional() ([]string, error) {
	if len(c.AdditionalDirectories) == 0 {
		return nil, nil
	}
	base := c.Cwd
	if base == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("additionalDirectories: %w", err)
		}
		base = wd
	}
	out := make([]string, 0, len(c.AdditionalDirectories))
	for i, d := range c.AdditionalDirectories {
		if d == "" {
			return nil, fmt.Errorf("additionalDirectories[%d]: empty path", i)
		}
		if rest, ok := strings.CutPrefix(d, "~/"); ok {
			home, err := os.UserHomeDir()
			if err != nil {
				return nil, fmt.Errorf("additionalDirectories[%d]: %w", i, err)
			}
			d = filepath.Join(home, rest)
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(base, d)
		}
		out = append(out, filepath.Clean(d))
	}
	return out, nil
}

// Plugin is the permission plugin.
var Plugin = core.Define("permission", apply,
	core.WithInject(tools.Key.Name()),
	core.WithProvides(tools.ReadPolicyKey.Name()),
	core.WithDescription("Allow, ask and deny rules over tool calls; deny rules are registry guards."))

// unanswerable is what the permission plugin asks of an approval service:
// why can no one answer ("" when someone can)? approval.Service implements it.
type unanswerable interface{ Unanswerable() string }

// scopedUnanswerable is the same question for the asks of one session scope
// (the front end that owns a session may answer where the default cannot).
type scopedUnanswerable interface {
	UnanswerableIn(scope *core.ScopeID) string
}

// alwaysNotifier is implemented by approval services that report "always" answers.
type alwaysNotifier interface {
	OnAllowedAlways(fn func(tools.ApprovalRequest)) (remove func())
}

func apply(c *core.Context, cfg Config) error {
	pol, err := New(cfg.spec())
	if err != nil {
		return err
	}
	extra, err := cfg.additional()
	if err != nil {
		return err
	}
	p := &plugin{c: c, policy: pol, extra: extra, grants: map[weak.Pointer[core.ScopeID]]*Policy{}, modes: map[weak.Pointer[core.ScopeID]]*Policy{},
		told: map[weak.Pointer[core.ScopeID]]string{}}
	reg := core.Use(c, tools.Key)
	if err := reg.Guard(c, p.guard); err != nil {
		return fmt.Errorf("permission: register guard: %w", err)
	}
	if err := tools.OnPreExecute(c, p.vote); err != nil {
		return err
	}
	if err := p.watchModes(c); err != nil {
		return err
	}
	return core.Provide[tools.ReadPolicy](c, tools.ReadPolicyKey, p)
}

// ReadDenied implements [tools.ReadPolicy] with the configured deny rules.
func (p *plugin) ReadDenied(_ *tools.Execution, path string) (string, bool) {
	return p.policy.ReadDenied(path)
}

// plugin is one active permission plugin.
type plugin struct {
	c      *core.Context
	policy *Policy
	extra  []string // AdditionalDirectories, absolute

	mu sync.Mutex
	// grants are the rules granted by "always" answers, per scope. Scopes are
	// held weakly: a session's grants go when its scope is collected.
	grants       map[weak.Pointer[core.ScopeID]]*Policy
	globalGrants *Policy // unscoped calls
	// modes are the policies of scopes whose mode was switched
	// (SetPermissionMode: an approved plan), held weakly like grants; a
	// scope's descendants follow it. globalMode: the unscoped calls'.
	modes      map[weak.Pointer[core.ScopeID]]*Policy
	globalMode *Policy
	// told is, per session scope, the mode its last prompt ran under
	// (modenotice.go), held weakly.
	told   map[weak.Pointer[core.ScopeID]]string
	hooked tools.Approver // approval service whose "always" answers we hear
	remove func()
}

// grantsFor returns the grants of scope (nil: none). Callers hold p.mu.
func (p *plugin) grantsFor(scope *core.ScopeID) *Policy {
	if scope == nil {
		return p.globalGrants
	}
	return p.grants[weak.Make(scope)]
}

// setGrants replaces the grants of scope and drops those of collected
// scopes. Callers hold p.mu.
func (p *plugin) setGrants(scope *core.ScopeID, g *Policy) {
	if scope == nil {
		p.globalGrants = g
		return
	}
	for k := range p.grants {
		if k.Value() == nil {
			delete(p.grants, k)
		}
	}
	p.grants[weak.Make(scope)] = g
}

// callOf is the policy's view of an execution: its tool, arguments, the
// session working directory its context carries, and how the subprocess
// service's sandbox will run it.
func (p *plugin) callOf(e *tools.Execution) Call {
	c := Call{Tool: e.Name(), Args: json.RawMessage(e.Arguments())}
	if t := e.Tool(); t != nil {
		c.ReadOnly, c.Internal = t.ReadOnly(), t.Internal()
	}
	if ctx := e.Context(); ctx != nil {
		c.Cwd, _ = workdir.From(ctx)
	}
	roots, active := p.sandbox()
	if active {
		c.Roots = roots
	}
	if len(p.extra) > 0 {
		c.Roots = append(append([]string(nil), c.Roots...), p.extra...)
	}
	if p.policy.Shell(c.Tool) {
		var args struct {
			Sandbox any `json:"sandbox"`
		}
		_ = json.Unmarshal(c.Args, &args)
		c.Escalated = args.Sandbox == "off"
		c.Sandboxed = active && !c.Escalated
	}
	return c
}

// sandbox reports whether the subprocess service runs commands in an
// enforced workspace-write sandbox by default, and that sandbox's writable
// roots. No subprocess service, mode off or read-only, or an enforcement of
// none: not active. Landlock's "partial" counts as enforced (writes and
// reads outside the policy are refused; what it cannot hide is in the
// report and docs/sandbox.md).
func (p *plugin) sandbox() ([]string, bool) {
	rt, ok := core.Lookup(p.c, subprocess.Key)
	if !ok || rt == nil {
		return nil, false
	}
	pol, rep := rt.Sandbox()
	if pol.Mode != subprocess.SandboxWorkspaceWrite || rep.Enforcement == subprocess.EnforcementNone {
		return nil, false
	}
	return pol.WritableRoots, true
}

// guard enforces deny rules and plan mode after every pre-execute vote and
// approval: a registry guard can only deny, and nothing overrides it.
func (p *plugin) guard(e *tools.Execution) string {
	if v := p.policyFor(e.Scope()).Evaluate(p.callOf(e)); v.Decision == Deny {
		return v.Reason
	}
	return ""
}

// vote is the pre-execute policy vote.
func (p *plugin) vote(_ context.Context, e *tools.Execution) (tools.Decision, error) {
	call := p.callOf(e)
	pol := p.policyFor(e.Scope())
	v := pol.Evaluate(call)
	switch v.Decision {
	case Deny:
		return tools.Deny(v.Reason), nil
	case Allow:
		return tools.Allow(), nil
	}
	if p.granted(e.Scope(), call) {
		return tools.Allow(), nil
	}
	if pol.Mode() == ModeDontAsk {
		// Nobody is asked: the ask is a denial. One only the mode made stays
		// soft, so a PreToolUse hook's allow still lifts it, as in Claude Code.
		return tools.Decision{Kind: tools.DecisionDeny, Soft: v.ByMode,
			Reason: p.denialFor(v, e.Name(), "the permission mode is dontAsk: what would be asked is denied")}, nil
	}
	// An ask only the mode made is soft: a PreToolUse hook's "allow" (an
	// Approve vote) lifts it, and its denial when nobody can answer.
	approver, ok := core.Lookup(p.c, tools.ApprovalKey)
	if !ok {
		return tools.Decision{Kind: tools.DecisionDeny, Soft: v.ByMode,
			Reason: p.denialFor(v, e.Name(), "no approval service is mounted (add the approval plugin to harness.yml)")}, nil
	}
	if u, ok := approver.(scopedUnanswerable); ok {
		if why := u.UnanswerableIn(e.Scope()); why != "" {
			return tools.Decision{Kind: tools.DecisionDeny, Soft: v.ByMode, Reason: p.denialFor(v, e.Name(), why)}, nil
		}
	} else if u, ok := approver.(unanswerable); ok {
		if why := u.Unanswerable(); why != "" {
			return tools.Decision{Kind: tools.DecisionDeny, Soft: v.ByMode, Reason: p.denialFor(v, e.Name(), why)}, nil
		}
	}
	p.listen(approver)
	return tools.Decision{Kind: tools.DecisionAsk, Reason: v.Reason, Soft: v.ByMode, AlwaysRules: v.Suggestions}, nil
}

// denialFor is the denial reason for an ask nobody can answer: what was
// asked, why nobody can answer, and what to configure, never clipped.
func (p *plugin) denialFor(v Verdict, tool, why string) string {
	var fix string
	switch {
	case v.Protected != "":
		fix = fmt.Sprintf("No allow rule or acceptEdits lets a tool write %s: approve it in an interactive session, or run with permission mode bypass.", v.Protected)
	case v.Rule != "":
		fix = fmt.Sprintf("To let this call run, remove %q from the ask list of the permission plugin in harness.yml.", v.Rule)
	case v.Escalated:
		fix = "Run it in the sandbox (leave out \"sandbox\": \"off\"), approve it in an interactive session, or, to let it leave the sandbox without asking, "
		if len(v.Suggestions) > 0 {
			fix += allowHint(p.policy.allowSources(), v.Suggestions)
		} else {
			fix += "add an allow rule written with the `unsandboxed` suffix (`bash(make deploy) unsandboxed`) to the permission plugin's allow list."
		}
	case len(v.Suggestions) > 0:
		fix = "To let this call run, " + allowHint(p.policy.allowSources(), v.Suggestions) +
			" Or, to allow every call that no deny rule refuses, set mode: bypass."
	case v.Unknown:
		fix = "No allow rule can cover such a command: run it in the sandbox (subprocess-local config sandbox: {mode: workspace-write}, see docs/sandbox.md), write the program name literally, or approve it in an interactive session."
	default:
		fix = "No allow rule can cover this call; approve it in an interactive session."
	}
	return fmt.Sprintf("%s, but %s. %s The tool %q was not run.", v.Reason, why, fix, tool)
}

// allowHint says how to allow rules: for one run with the CLI's
// --allowed-tools flag (one per rule, quoted for a POSIX shell), or in the
// allow list without losing the default configuration: a patch file
// repeating the current list (a patch's list replaces the row's whole
// list), or the full configuration written by `harness config`.
func allowHint(current, add []string) string {
	flags := make([]string, len(add))
	for i, r := range add {
		flags[i] = "--allowed-tools " + shellQuote(r)
	}
	quoted := func(rules []string) string {
		out := make([]string, len(rules))
		for i, r := range rules {
			out[i] = quoteJSON(r)
		}
		return strings.Join(out, ", ")
	}
	what := "the rule " + quoted(add)
	if len(add) > 1 {
		what = "the rules " + quoted(add)
	}
	all := append(append([]string{}, current...), add...)
	return fmt.Sprintf("run with %s (this run only), or add %s to the allow list of the permission plugin: either save the patch\n"+
		"- {id: permission, config: {allow: [%s]}}\n"+
		"to a file and run with --patch FILE (the row id is the permission row's id in your harness.yml; a patch's list replaces the whole list, so the patch repeats the current rules), "+
		"or write the complete configuration with `harness config > harness.yml` and add %s to its allow list "+
		"(a harness.yml holding only a permission row would replace the whole default configuration).",
		strings.Join(flags, " "), what, quoted(all), quoted(add))
}

// shellQuote quotes s as one word for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// granted reports whether an "always" answer in this scope covers the call.
func (p *plugin) granted(scope *core.ScopeID, call Call) bool {
	p.mu.Lock()
	g := p.grantsFor(scope)
	p.mu.Unlock()
	return g != nil && g.Evaluate(call).Decision == Allow
}

// listen subscribes once to the approval service's "always" answers.
func (p *plugin) listen(a tools.Approver) {
	n, ok := a.(alwaysNotifier)
	p.mu.Lock()
	defer p.mu.Unlock()
	if !ok || p.hooked == a {
		return
	}
	if p.remove != nil {
		p.remove()
	}
	p.hooked = a
	p.remove = n.OnAllowedAlways(p.rememberAlways)
	remove := p.remove
	_ = p.c.Effect("permission: approval listener", func() (func(), error) { return remove, nil })
}

// rememberAlways adds the rules an "always" answer names (the request's
// AlwaysRules, which the question showed; else the suggestion for the call)
// to the scope's grants. Deny rules and plan mode still apply: grants are consulted
// only for calls the policy would ask about.
func (p *plugin) rememberAlways(req tools.ApprovalRequest) {
	add := req.AlwaysRules // the exact rules the question showed
	if len(add) == 0 {
		v := p.policy.Evaluate(Call{Tool: req.Tool, Args: json.RawMessage(req.Arguments)})
		if v.Decision != Ask || len(v.Suggestions) == 0 {
			return
		}
		add = v.Suggestions
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var allow []string
	if g := p.grantsFor(req.Scope); g != nil {
		allow = g.allowSources()
	}
	spec := p.policy.spec
	spec.Allow, spec.Ask, spec.Deny, spec.Mode = append(allow, add...), nil, nil, ModeDefault
	spec.ReadOnly = nil
	if g, err := New(spec); err == nil {
		p.setGrants(req.Scope, g)
	}
}

// quoteJSON renders s as a JSON string (also a YAML double-quoted scalar)
// without escaping <, > and & (rules name redirections).
func quoteJSON(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// InForce is what a front end shows for /permissions: the mode and rules
// the plugin enforces, and the rules "always" answers granted in a scope.
type InForce struct {
	Mode               Mode
	Allow, Ask, Deny   []string
	Granted            []string // this scope's "always" grants
	AutoAllowSandboxed bool
}

// Describer is implemented by the permission plugin's service (provided
// under tools.ReadPolicyKey): front ends type-assert to it.
type Describer interface {
	// InForce returns the rules in force for calls of scope (nil: unscoped).
	InForce(scope *core.ScopeID) InForce
}

var (
	_ Describer          = (*plugin)(nil)
	_ tools.ModeReporter = (*plugin)(nil)
	_ tools.ModeSwitcher = (*plugin)(nil)
)

// policyFor is the policy in force for calls of scope: the one a
// SetPermissionMode gave scope or its nearest ancestor, else the
// configured one.
func (p *plugin) policyFor(scope *core.ScopeID) *Policy {
	p.mu.Lock()
	defer p.mu.Unlock()
	if scope == nil {
		if p.globalMode != nil {
			return p.globalMode
		}
		return p.policy
	}
	if len(p.modes) > 0 {
		for _, s := range scope.Chain() {
			if pol, ok := p.modes[weak.Make(s)]; ok {
				return pol
			}
		}
	}
	return p.policy
}

// SetPermissionMode implements [tools.ModeSwitcher]: calls of scope and
// its descendants run under mode from now on (Claude Code's names; bypass
// is also accepted). The rules are the configured ones; "always" grants
// stay.
func (p *plugin) SetPermissionMode(scope *core.ScopeID, mode string) error {
	m := Mode(mode)
	if m == "bypassPermissions" {
		m = ModeBypass
	}
	if !m.Valid() {
		return fmt.Errorf("permission mode %q is not one of default, acceptEdits, plan, bypassPermissions, dontAsk", mode)
	}
	pol := p.policy.WithMode(m)
	p.mu.Lock()
	defer p.mu.Unlock()
	if scope == nil {
		p.globalMode = pol
		return nil
	}
	for k := range p.modes {
		if k.Value() == nil {
			delete(p.modes, k)
		}
	}
	p.modes[weak.Make(scope)] = pol
	return nil
}

// PermissionMode implements [tools.ModeReporter]: the mode by Claude Code's
// name (bypass is bypassPermissions).
func (p *plugin) PermissionMode(scope *core.ScopeID) string {
	if m := p.policyFor(scope).Mode(); m != ModeBypass {
		return string(m)
	}
	return "bypassPermissions"
}

// InForce implements [Describer].
func (p *plugin) InForce(scope *core.ScopeID) InForce {
	spec := p.policyFor(scope).spec
	out := InForce{Mode: spec.Mode, Allow: slices.Clone(spec.Allow), Ask: slices.Clone(spec.Ask), Deny: slices.Clone(spec.Deny),
		AutoAllowSandboxed: spec.AutoAllowSandboxed}
	p.mu.Lock()
	if g := p.grantsFor(scope); g != nil {
		out.Granted = g.allowSources()
	}
	p.mu.Unlock()
	return out
}

package hooks

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// DefaultTimeout is how long a hook command may run when its `timeout` is unset.
const DefaultTimeout = 60 * time.Second

// Config is the hooks plugin's configuration. Its `hooks` block has the shape
// of the `hooks` key of a Claude Code settings file, so a deployer can paste
// one in (JSON is YAML):
//
//	hooks:
//	  PreToolUse:
//	    - matcher: "Bash"
//	      hooks:
//	        - type: command
//	          command: "$CLAUDE_PROJECT_DIR/.claude/hooks/check.sh"
//	          timeout: 30
type Config struct {
	// Hooks lists the command hooks' matcher groups per event, in the shape of
	// the hooks block of a Claude Code settings file.
	Hooks Events `yaml:"hooks" json:"hooks"`
	// Cwd is the directory hook commands run in and the `cwd` they are told;
	// empty means the process's working directory.
	Cwd string `yaml:"cwd" json:"cwd,omitempty"`
	// Sandbox runs hook commands under the subprocess service's default
	// sandbox policy (docs/sandbox.md). Default false: hooks are programs
	// the deployer configured, and run with the user's permissions (the
	// harness process is non-dumpable, so they cannot read its environment
	// unless they run as root).
	Sandbox bool `yaml:"sandbox" json:"sandbox,omitempty"`
	// SessionID is the `session_id` sent when the caller supplies none
	// (a call outside a session: `harness tool`); empty mints a fresh id.
	SessionID string `yaml:"sessionId" json:"sessionId,omitempty"`
	// ToolNames renames tools in the `tool_name` hooks read, on top of the
	// default naming (an entry wins over both).
	ToolNames map[string]string `yaml:"toolNames" json:"toolNames,omitempty"`
	// HarnessToolNames sends the harness's own tool names (bash, read, …)
	// in `tool_name` instead of Claude Code's (Bash, Read, Write, Edit, Grep,
	// Glob, TodoWrite, Task, BashOutput, KillShell), which are the default so
	// scripts written for Claude Code work unchanged, and tool_input and
	// tool_response in the harness's shape. Matchers select by either name,
	// case-insensitively.
	HarnessToolNames bool `yaml:"harnessToolNames" json:"harnessToolNames,omitempty"`
	// PermissionMode is the `permission_mode` hooks are told when no
	// permission plugin is mounted (with one, hooks are told the mode it
	// enforces): default, acceptEdits, plan, bypassPermissions or dontAsk
	// (Claude Code's names). Empty means default.
	PermissionMode string `yaml:"permissionMode" json:"permissionMode,omitempty" jsonschema:"enum=default,enum=acceptEdits,enum=plan,enum=bypassPermissions,enum=dontAsk"`
}

// Events holds the matcher groups of each supported event. Claude Code events
// the harness does not fire are rejected here; a Claude Code settings file
// that names them loads with a warning (docs/policy.md).
type Events struct {
	// PreToolUse runs before a tool call, after argument validation; it may
	// allow, ask, or deny. Matcher: the tool name.
	PreToolUse []MatcherGroup `yaml:"PreToolUse" json:"PreToolUse,omitempty"`
	// PostToolUse runs after a tool call produced its result; it may block the
	// result, add context, or replace the output. Matcher: the tool name.
	PostToolUse []MatcherGroup `yaml:"PostToolUse" json:"PostToolUse,omitempty"`
	// SessionStart runs when the agent starts or resumes a session; it may add
	// context. Matcher: the source (startup, resume, clear, compact).
	SessionStart []MatcherGroup `yaml:"SessionStart" json:"SessionStart,omitempty"`
	// UserPromptSubmit runs before a user prompt reaches the model; it may
	// block the prompt or add context. No matcher.
	UserPromptSubmit []MatcherGroup `yaml:"UserPromptSubmit" json:"UserPromptSubmit,omitempty"`
	// Stop runs when the agent is about to end its turn; a block keeps it
	// going with the reason as its next instruction. No matcher.
	Stop []MatcherGroup `yaml:"Stop" json:"Stop,omitempty"`
	// PreCompact runs before the history is compacted; a block cancels a
	// manual compaction. Matcher: the trigger (manual, auto).
	PreCompact []MatcherGroup `yaml:"PreCompact" json:"PreCompact,omitempty"`
	// Notification runs when the harness is about to ask a person for a
	// tool's approval (notification_type permission_prompt); it only
	// observes. Matcher: the notification type.
	Notification []MatcherGroup `yaml:"Notification" json:"Notification,omitempty"`
	// PermissionRequest runs when a tool call needs approval, before a person
	// is asked (headless, the permission plugin denies first); it may deny, or
	// allow a call only the permission mode asks about (not one a rule asks
	// about). Matcher: the tool name.
	PermissionRequest []MatcherGroup `yaml:"PermissionRequest" json:"PermissionRequest,omitempty"`
	// SubagentStart runs when a subagent is created, before its first turn;
	// it only observes. Matcher: the agent type.
	SubagentStart []MatcherGroup `yaml:"SubagentStart" json:"SubagentStart,omitempty"`
	// SubagentStop runs when a subagent's turn settled; it only observes (a
	// block does not keep the subagent going). Matcher: the agent type.
	SubagentStop []MatcherGroup `yaml:"SubagentStop" json:"SubagentStop,omitempty"`
	// SessionEnd runs once when a session closes; it only observes.
	// Matcher: the reason (always "other").
	SessionEnd []MatcherGroup `yaml:"SessionEnd" json:"SessionEnd,omitempty"`
}

// MatcherGroup is one matcher with the commands it selects.
type MatcherGroup struct {
	// Matcher selects by tool name (or session source): empty or `*` matches
	// everything; a pattern of letters, digits, `_` and `|` is a list of exact
	// names (`Edit|Write`); anything else is an unanchored regular expression.
	// Matching ignores case, so Claude Code's `Bash` selects the `bash` tool.
	Matcher string `yaml:"matcher" json:"matcher,omitempty"`
	// Hooks are the commands to run, all in parallel.
	Hooks []CommandHook `yaml:"hooks" json:"hooks"`
}

// CommandHook is one hook command.
type CommandHook struct {
	// Type must be "command" (the only handler type the harness runs).
	Type string `yaml:"type" json:"type,omitempty" jsonschema:"enum=command"`
	// Command is a shell command line, run with `bash -c`; it reads the event
	// JSON on stdin. $CLAUDE_PROJECT_DIR and $HARNESS_PROJECT_DIR name the
	// working directory.
	Command string `yaml:"command" json:"command"`
	// Timeout is the limit in seconds (Claude Code's unit); 0 means 60.
	Timeout float64 `yaml:"timeout" json:"timeout,omitempty" jsonschema:"minimum=0"`
	// Name labels the hook in denial reasons and logs; defaults to the command.
	Name string `yaml:"name" json:"name,omitempty"`
	// FailOpen makes a failure of this hook (it could not run: a spawn
	// error, exit status 126 or 127, a missing script; it timed out, was
	// killed, or printed invalid JSON) a logged non-blocking error, as in
	// Claude Code, instead of denying the call. It matters for PreToolUse
	// only: other events never fail closed. Default false: a safety hook
	// that silently does not run must not open the gate.
	FailOpen bool `yaml:"failOpen" json:"failOpen,omitempty"`
}

// label names the hook for reasons and logs.
func (h CommandHook) label() string {
	if h.Name != "" {
		return h.Name
	}
	c := strings.Join(strings.Fields(h.Command), " ")
	if len(c) > 80 {
		c = c[:77] + "..."
	}
	return c
}

// timeout returns the enforced limit.
func (h CommandHook) timeout() time.Duration {
	if h.Timeout <= 0 {
		return DefaultTimeout
	}
	return time.Duration(h.Timeout * float64(time.Second))
}

// Validate checks every group: known handler type, non-empty command,
// non-negative timeout, compilable matcher. Errors name the field path.
func (c Config) Validate() error {
	switch c.PermissionMode {
	case "", "default", "acceptEdits", "plan", "bypassPermissions", "dontAsk":
	default:
		return fmt.Errorf("permissionMode: must be default, acceptEdits, plan, bypassPermissions or dontAsk, got %q", c.PermissionMode)
	}
	for _, ev := range c.Hooks.all() {
		for i, g := range ev.groups {
			where := fmt.Sprintf("hooks.%s[%d]", ev.name, i)
			if _, err := compileMatcher(g.Matcher); err != nil {
				return fmt.Errorf("%s.matcher: %w", where, err)
			}
			if len(g.Hooks) == 0 {
				return fmt.Errorf("%s.hooks: at least one hook is required", where)
			}
			for j, h := range g.Hooks {
				hw := fmt.Sprintf("%s.hooks[%d]", where, j)
				if h.Type != "" && h.Type != "command" {
					return fmt.Errorf("%s.type: %q is not supported (only \"command\")", hw, h.Type)
				}
				if strings.TrimSpace(h.Command) == "" {
					return fmt.Errorf("%s.command: must not be empty", hw)
				}
				if h.Timeout < 0 {
					return fmt.Errorf("%s.timeout: must not be negative", hw)
				}
			}
		}
	}
	return nil
}

// EventNames lists the hook events the harness fires, as a Claude Code
// settings file names them.
func EventNames() []string {
	var out []string
	for _, ev := range (Events{}).all() {
		out = append(out, ev.name)
	}
	return out
}

type namedGroups struct {
	name   string
	groups []MatcherGroup
}

func (e Events) all() []namedGroups {
	return []namedGroups{
		{EventPreToolUse, e.PreToolUse}, {EventPostToolUse, e.PostToolUse},
		{EventSessionStart, e.SessionStart}, {EventUserPromptSubmit, e.UserPromptSubmit}, {EventStop, e.Stop},
		{EventPreCompact, e.PreCompact}, {EventNotification, e.Notification},
		{EventPermissionRequest, e.PermissionRequest}, {EventSubagentStart, e.SubagentStart},
		{EventSubagentStop, e.SubagentStop}, {EventSessionEnd, e.SessionEnd},
	}
}

// The hook event names, as sent in `hook_event_name`.
const (
	EventPreToolUse        = "PreToolUse"
	EventPostToolUse       = "PostToolUse"
	EventSessionStart      = "SessionStart"
	EventUserPromptSubmit  = "UserPromptSubmit"
	EventStop              = "Stop"
	EventPreCompact        = "PreCompact"
	EventNotification      = "Notification"
	EventPermissionRequest = "PermissionRequest"
	EventSubagentStart     = "SubagentStart"
	EventSubagentStop      = "SubagentStop"
	EventSessionEnd        = "SessionEnd"
)

// matcher is a compiled MatcherGroup.Matcher.
type matcher struct {
	all      bool
	literals []string
	re       *regexp.Regexp
}

var literalMatcher = regexp.MustCompile(`^[A-Za-z0-9_|]+$`)

// compileMatcher compiles a matcher; an invalid regular expression is an error.
func compileMatcher(s string) (matcher, error) {
	switch {
	case s == "" || s == "*":
		return matcher{all: true}, nil
	case literalMatcher.MatchString(s):
		return matcher{literals: strings.Split(s, "|")}, nil
	}
	if _, err := regexp.Compile(s); err != nil {
		return matcher{}, fmt.Errorf("invalid regular expression %q: %w", s, err)
	}
	return matcher{re: regexp.MustCompile("(?i)" + s)}, nil
}

// match reports whether the matcher selects name.
func (m matcher) match(name string) bool {
	if m.all {
		return true
	}
	if m.re != nil {
		return m.re.MatchString(name)
	}
	for _, l := range m.literals {
		if strings.EqualFold(l, name) {
			return true
		}
	}
	return false
}

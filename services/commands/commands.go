package commands

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/dshgo/harness/core"
)

// Key is the commands service key ("commands").
var Key = core.NewKey[*Registry]("commands")

// Command is one slash command.
type Command struct {
	// Name is typed after "/": lower-case letters, digits, '-', '_' and ':'
	// (for a plugin's namespace, e.g. "git:commit"), starting with a letter.
	Name string
	// Args is a usage hint for the arguments, e.g. "[route]" ("" for none).
	Args string
	// Summary is one line for /help and completion menus.
	Summary string
	// Run runs the command; nil marks a front-end command (see the package
	// doc). It must honour ctx.
	Run func(ctx context.Context, inv Invocation) (Reply, error)
}

// Invocation is one use of a command.
type Invocation struct {
	// Args is the text after the command name, trimmed.
	Args string
	// Session is the front end's current session, or nil when none is open.
	Session Session
}

// Session is what a command may know of the front end's session; an
// *agent.Session satisfies it.
type Session interface {
	// ID is the session id.
	ID() string
	// Scope is the session's core scope (for scoped lookups).
	Scope() *core.ScopeID
}

// Reply is what a command gives back to the front end.
type Reply struct {
	// Text is shown to the user, as Markdown.
	Text string
	// Prompt, when not empty, is sent to the agent as the user's next turn
	// (a command that expands to a prompt).
	Prompt string
	// Rewound says the command changed the session's conversation (a
	// rewind): a front end that shows it renders it again from the
	// session's history.
	Rewound bool
	// Draft, when not empty, is put in the front end's editor, not sent
	// (the prompt a rewind took back, to edit and send again).
	Draft string
}

// nameRE is the command name syntax.
var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_:-]*$`)

// Registry holds the commands. Safe for concurrent use.
type Registry struct {
	mu   sync.Mutex
	cmds []Command // sorted by name
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// Register adds cmd for the lifetime of c's plugin (an effect of its
// fiber; nil c: for the registry's lifetime). Errors: an invalid name, or a
// name already registered.
func (r *Registry) Register(c *core.Context, cmd Command) error {
	cmd.Name = strings.TrimPrefix(cmd.Name, "/")
	if !nameRE.MatchString(cmd.Name) {
		return fmt.Errorf("commands: invalid command name %q (lower-case letters, digits, '-', '_', ':'; starting with a letter)", cmd.Name)
	}
	r.mu.Lock()
	i, found := slices.BinarySearchFunc(r.cmds, cmd.Name, byName)
	if found {
		r.mu.Unlock()
		return fmt.Errorf("commands: /%s is already registered", cmd.Name)
	}
	r.cmds = slices.Insert(r.cmds, i, cmd)
	r.mu.Unlock()
	if c == nil {
		return nil
	}
	return c.Effect("command /"+cmd.Name, func() (func(), error) {
		return func() { r.remove(cmd.Name) }, nil
	})
}

func byName(c Command, name string) int { return strings.Compare(c.Name, name) }

func (r *Registry) remove(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i, ok := slices.BinarySearchFunc(r.cmds, name, byName); ok {
		r.cmds = slices.Delete(r.cmds, i, i+1)
	}
}

// Lookup returns the command named name (without "/").
func (r *Registry) Lookup(name string) (Command, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if i, ok := slices.BinarySearchFunc(r.cmds, name, byName); ok {
		return r.cmds[i], true
	}
	return Command{}, false
}

// List returns every command, sorted by name.
func (r *Registry) List() []Command {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.cmds)
}

// Complete returns the commands whose name starts with prefix (a leading
// "/" is ignored), sorted by name.
func (r *Registry) Complete(prefix string) []Command {
	prefix = strings.TrimPrefix(prefix, "/")
	var out []Command
	for _, c := range r.List() {
		if strings.HasPrefix(c.Name, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// Parse splits a line typed by the user into a command name and its
// arguments. ok is false when the line is not a command: it does not start
// with "/", or the word after "/" is not a command name (so "/usr/bin is
// a path" is a prompt).
func Parse(line string) (name, args string, ok bool) {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "/") {
		return "", "", false
	}
	name, args, _ = strings.Cut(line[1:], " ")
	if !nameRE.MatchString(name) {
		return "", "", false
	}
	return name, strings.TrimSpace(args), true
}

// Help renders the command list as Markdown (what /help shows).
func (r *Registry) Help() string {
	var b strings.Builder
	b.WriteString("| command | what it does |\n|---|---|\n")
	for _, c := range r.List() {
		usage := "/" + c.Name
		if c.Args != "" {
			usage += " " + c.Args
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", usage, c.Summary)
	}
	return b.String()
}

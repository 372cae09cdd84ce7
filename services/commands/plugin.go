package commands

import (
	"context"

	"github.com/dshgo/harness/core"
)

// Standard returns the standard commands: /help (runs here: the command
// list) and the front-end commands every interactive front end is expected
// to handle. Their names and meanings are the contract:
//
//	/clear         start a new session
//	/compact [instructions]  summarize the older history
//	/model [route] show or switch the model route
//	/resume [id]   pick a stored session and continue it
//	/sessions      list stored sessions
//	/cost          tokens and cost of the session
//	/context       context-window use
//	/tools         the tools the model sees
//	/permissions   the permission mode and rules in force
//	/exit          leave
func Standard(r *Registry) []Command {
	return []Command{
		{Name: "help", Summary: "list the commands", Run: func(context.Context, Invocation) (Reply, error) {
			return Reply{Text: r.Help()}, nil
		}},
		{Name: "clear", Summary: "start a new session (the current one stays stored)"},
		{Name: "compact", Args: "[instructions]", Summary: "summarize the older history to free context"},
		{Name: "model", Args: "[route]", Summary: "show the model, or switch to another route"},
		{Name: "resume", Args: "[id]", Summary: "pick a stored session and continue it"},
		{Name: "sessions", Summary: "list the stored sessions"},
		{Name: "cost", Summary: "tokens used and cost of this session"},
		{Name: "context", Summary: "how much of the context window is used"},
		{Name: "tools", Summary: "the tools the model sees"},
		{Name: "permissions", Summary: "the permission mode and the rules in force"},
		{Name: "exit", Summary: "leave (also Ctrl+C twice)"},
	}
}

// Config configures the commands plugin (it has no settings).
type Config struct{}

// Plugin provides the registry under Key, holding the [Standard] commands.
var Plugin = core.Define("commands", apply,
	core.WithProvides(Key.Name()),
	core.WithDescription("Slash-command registry: the standard commands, plus those other plugins contribute; used by the terminal UI and the web app."))

func apply(c *core.Context, _ Config) error {
	r := NewRegistry()
	for _, cmd := range Standard(r) {
		if err := r.Register(nil, cmd); err != nil {
			return err
		}
	}
	return core.Provide(c, Key, r)
}

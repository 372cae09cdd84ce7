// Package commands is the slash-command registry: the service (key
// "commands") that front ends (the terminal UI, the web app) read to list,
// complete and run the `/name args` lines a user types, and that plugins
// contribute commands to, as they contribute tools to the tool registry.
//
//	plugin ──Register(c, Command)──► Registry (key "commands") ◄── front end
//	                                   │ Lookup · List · Complete · Parse
//	                                   ▼
//	Command.Run(ctx, Invocation) ──► Reply{Text (markdown), Prompt}
//
// A command whose Run is nil is a front-end command: the front end that
// shows it runs it itself, because it acts on what only the front end holds
// (its session, its screen). The commands plugin registers the standard set
// (see [Standard]); a front end without a handler for one says so. A
// command registered through a plugin's context is removed when that plugin
// is disposed.
package commands

// Package acp is the harness's Agent Client Protocol server: `harness acp`
// speaks ACP (JSON-RPC 2.0, one message per line, over stdin and stdout) so
// that an editor (Zed, JetBrains IDEs, any ACP client) drives the harness's
// agent. It is a front end, like the CLI's text output, the terminal UI and
// the web app: it renders the agent's events and the tool-call
// presentation model, and never decodes a tool's arguments.
//
//	client ──initialize──────────► capabilities (loadSession, embedded context; no auth)
//	       ──session/new {cwd}───► Options.Boot(cwd, MCP servers) (once per pair) → agent session
//	       ──session/prompt──────► Session.Run ──agent.Event──► session/update …
//	       ◄─session/request_permission── the approval service's question (tools.AnswererKey)
//	       ──session/cancel──────► the turn's context is cancelled → stopReason cancelled
//	       ──session/load {id}───► the stored records replayed as session/update, then resumed
//	       ──session/set_mode────► tools.ModeSwitcher (permission modes)
//
// Events map to updates as follows: text and reasoning deltas are
// agent_message_chunk and agent_thought_chunk; a tool call is tool_call
// (pending) with its presentation as it is (title, kind, locations, diff
// content, raw input), then tool_call_update in_progress when its body
// starts, with its output while it runs, and completed or failed with its
// result; a call that sets the plan (the todo tool) is followed by a plan
// update. A command's terminal content is sent as a text block, unless the
// client announced the terminal_output _meta capability. The commands
// registry's runnable commands are announced (available_commands_update)
// and a prompt `/name args` naming one is expanded, as `harness run` does. A turn maps to a
// stop reason: end_turn, cancelled, max_tokens (the reply hit the output
// limit), max_turn_requests (maxSteps); a failed model call is a JSON-RPC
// error.
package acp

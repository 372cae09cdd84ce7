// Package agent is the agent loop: the `agent` plugin provides a [Service]
// that opens [Session]s, and a session runs user turns against a model
// (services/llm), the tool registry (services/tools) and the system prompt
// (services/systemprompt).
//
// # One turn
//
//	Run(ctx, prompt)
//	  UserPromptSubmit (lifecycle waterfall; a block rejects the prompt)
//	  log user message
//	  repeat until the model stops, MaxSteps, or ctx is cancelled:
//	    Assemble(scope) ─ Render ─ runtime-context snapshot if changed
//	    stream the model: text/reasoning deltas observed as they arrive
//	    log assistant message (text, reasoning, tool calls) and usage
//	    tool calls: log tool/call ─ Scheduler (policy and results in model
//	      order, parallel-safe bodies overlapped) ─ log tool/result ─
//	      additional contexts as plugin-sourced user messages
//	  Stop (lifecycle waterfall; a block continues once with its reason)
//
// The session is a core scope (core.NewScope): tools, prompt sections and
// listeners registered through [Session.Context] see only this session,
// and the loop dispatches every tool call and lifecycle event to it. The
// prompt variables provider, model, cwd, date and os are registered in
// the scope (and globally with process-wide values).
//
// # Cancellation
//
// Cancelling the context of Run stops the model stream, cancels running
// tool bodies (the bash tool terminates its process group) and records
// ABORTED / ABORTED_BEFORE_DISPATCH results for the calls of the step, so
// the log stays a valid conversation; Run returns ctx's error.
//
// # Session logs
//
// Each session is an append-only JSONL file StateDir/sessions/ID.jsonl
// (0600 in a 0700 directory): a header {type:"session", v, id, cwd, model,
// time}, then user, assistant, tool/call, tool/result and usage records
// (see [Record]). Each record is one write(2) of one line on an O_APPEND
// file, so a crash can only tear the last line, which readers ignore and
// [OpenJournal] truncates before appending. [Replay] rebuilds the exact
// conversation; the canonical tool value is never persisted (the model sees the
// rendered content only, on replay as live).
//
// Nothing is stored for a configuration error: [Service.Open] checks the
// route and the options before touching a log, a new session's file is
// created by its first kept record, and a turn's records are held until
// its first model call got past the route's up-front checks (a missing
// API key drops the turn; see [Session.Run] and [IsConfigError]).
package agent

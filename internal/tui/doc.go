// Package tui is the terminal user interface of `harness` and `harness chat`
// on a terminal: a Bubble Tea v2 program driven only by the agent's event
// stream (agent.Event), the same stream `--output stream-json` prints.
//
//	keys ──► Model.Update ──► editor (history, Ctrl+R, @path and / completion)
//	                     └──► Session.Run in a command ──► agent.Event ──┐
//	agent loop ── Observer ── Program.Send(eventMsg) ◄───────────────────┘
//	approval service ── tools.AnswererKey (this UI) ── approvalMsg ──► modal ──► answer
//	Model.View = transcript window (cached per item) + completion + editor + status bar
//
// The UI never calls a tool or the model: it starts turns on an
// *agent.Session, answers approval questions through tools.AnswererKey,
// and runs slash commands from the commands service (services/commands).
// Finished transcript items are rendered once per width and cached, so the
// cost of a streamed token does not grow with the transcript.
package tui

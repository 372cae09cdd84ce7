// Package hooks is the hooks plugin: command hooks speaking the Claude Code
// hook protocol, configured in harness.yml with the shape of the `hooks` key
// of a Claude Code settings file, so existing hook scripts run unchanged.
//
//	PreToolUse ──► tools.OnPreExecute vote (merged deny > ask > allow with every other vote)
//	PostToolUse ─► tools.PostExecute listener (block, add context, replace the output)
//	SessionStart, UserPromptSubmit, Stop ─► lifecycle events fired by the agent loop
//
// For each event every hook whose matcher selects the tool (or session
// source) runs in parallel, each as `bash -c <command>` through the
// subprocess service in its own managed range, with the event JSON on stdin
// and an enforced timeout (default 60 s; on timeout the whole range is killed
// and its pipes closed). A hook answers by exit code (0 ok, 2 block with
// stderr as the reason, other = non-blocking error, logged) or by JSON on
// stdout (decision / hookSpecificOutput.permissionDecision allow|deny|ask
// with a reason, additionalContext, PostToolUse `decision: block`, and
// hookSpecificOutput.updatedToolOutput to replace the tool output).
//
// Answers merge deny > ask > allow with the reasons of the winning answer
// joined. For PreToolUse a hook that times out, is killed, cannot run (a
// spawn error; bash's exit status 126 or 127) or prints invalid JSON fails
// closed: the call is denied with a reason naming the hook, unless the hook
// sets failOpen (Claude Code's behaviour: logged, the call proceeds). For the
// other events such failures are logged and ignored. A hook answers when its
// command exits; descendants still holding its pipes are drained within a
// short grace and terminated.
//
// Contract: Claude Code hooks (reference A16) over the dsh pipeline (A9, A10);
// the deny-wins case is B17.
package hooks

// Package subagentinprocess is the subagent-inprocess plugin: a provider of
// the subagents service whose children are agent sessions in this process.
//
//	parent session (scope session:P) ── task tool ── subagents.Start("inprocess", req)
//	   └─ child session (scope session:C, parent session:P)
//	        header {parent: P, origin: subagent}; state "subagent" {depth, tools, persona, ...}
//	        tools: the parent's, intersected with req.Tools; no delegation tools at maxDepth
//	        persona: a scoped deployment:persona-prefix section (shadows the deployment's)
//	        policy: the permission rules, hooks and approval of the parent (global or
//	                scoped to an ancestor scope) apply, since the child's scope lies within
//	        events: relayed to the parent's observer with the child's id and depth
//
// A child runs under the context of the tool call that started it:
// interrupting the parent's turn interrupts the child's, which stops its tool
// calls and their processes and records aborted results in both logs. Every
// capability of the service is supported, resume included: a continuable
// child is reopened from its stored session (its restrictions and persona
// from its "subagent" state record) after a restart.
package subagentinprocess

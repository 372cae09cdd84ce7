// Package permission is the permission plugin: allow, ask and deny rules over
// tool calls, written in harness.yml, in the rule language of Claude Code.
//
//	permission:
//	  mode: default            # default | acceptEdits | plan | bypass
//	  allow: ["bash(git *)", "bash(go test *)", "read"]
//	  ask:   ["edit", "write"]
//	  deny:  ["bash(rm -rf *)", "read(**/.env)"]
//
// A rule is `tool` (every call) or `tool(argument-pattern)`. For shell tools
// (bash) the pattern is a glob over the command, and the command is split with
// a real shell parser into its simple commands (operands of `&&`, `||`, `;`,
// `|`, subshells, substitutions, `bash -c '…'`): an allow rule set covers the
// command only if every part is covered, while a deny or ask rule matches if
// any part matches. For file tools (read, write, edit, grep, glob) the pattern
// is a doublestar glob over the path, relative to the working directory. For
// other tools it is a glob over the arguments as compact JSON.
//
// Evaluation order is fixed, whatever the order of plugins and hooks:
//
//	deny rule ─► deny      (also enforced as a registry guard: nothing overrides it)
//	plan mode, not read-only ─► deny
//	ask rule ─► ask        (bypass mode skips this)
//	covered by allow rules ─► allow
//	mode: read-only tools allow; acceptEdits also allows edits; bypass allows; else ask
//
// Asks go to the approval service (plugin approval). When no one can answer
// (no approval service, or a headless one) an ask becomes a denial whose
// reason names the rule that would allow the call. Answers of "always" are
// remembered for the session: the permission plugin adds the suggested rule
// for that call to a per-scope allow list.
//
// The pre-execute vote goes through tools.OnPreExecute, which merges every
// policy vote deny > cancel > ask > allow, so a hook's "allow" never lifts a
// rule's ask or deny (dsh tools-and-prompt A10 and A16; case B17).
package permission

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
// (bash) the pattern is a glob over the command, and the command is analysed
// with a real bash parser into its simple commands (operands of `&&`, `||`,
// `;`, `|`, subshells, substitutions, and every literal script handed to a
// shell: `bash -c '…'` with any options, heredocs, here-strings and pipes
// into a shell, `eval`, `trap`, `source <(…)`, wrapper options such as
// `su -c`): an allow rule set covers the command only if every part is
// covered, while a deny or ask rule matches if any part matches, in any of
// its forms (quoting resolved, wrappers peeled with a table of their
// options, program paths reduced, option spellings normalised). A part
// whose program or script is not static is unknown: no allow rule covers it
// and it is asked in every mode unless it runs in the sandbox. Redirections
// (`> FILE`, `< FILE`, `$(< FILE)`) need an allow rule that names them and
// are checked against the file deny rules; the bash tool's workdir is seen
// too. For file tools (read, write, edit, grep, glob) the pattern is a
// doublestar glob over the path, relative to the working directory; deny
// rules also catch hard links. For other tools it is a glob over the
// arguments as compact JSON. docs/policy.md is the contract.
//
// Evaluation order is fixed, whatever the order of plugins and hooks:
//
//	deny rule ─► deny      (also enforced as a registry guard: nothing overrides it)
//	plan mode, not read-only ─► deny
//	ask rule ─► ask        (bypass mode skips this)
//	shell: workdir outside the workspace, or unknown and not sandboxed ─► ask (every mode)
//	covered by allow rules ─► allow
//	shell call in an enforced workspace-write sandbox, autoAllowSandboxed ─► allow
//	mode: read-only tools allow; acceptEdits also allows edits inside the
//	workspace; bypass allows; else ask
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

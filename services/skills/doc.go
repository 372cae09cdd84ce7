// Package skills is the skills service: skills (folders holding a SKILL.md,
// in the format Claude Code and the Agent Skills spec use) and custom slash
// commands (Markdown files, Claude Code's `.claude/commands/NAME.md`),
// discovered from the project and the user's directories.
//
//	.claude/skills/NAME/SKILL.md ─┐                 ┌─► prompt section "skills": `- name: description`
//	.agents/skills/NAME/SKILL.md ─┼─► Discover ──►  │   (sorted by name, byte-stable)
//	.harness/skills/NAME/SKILL.md ┘   Catalog ──────┼─► tool `skill` {name}: the body and the folder
//	.claude/commands/**.md ───────────────┘         └─► commands registry: /name args → the expanded body
//
// # Discovery
//
// Project roots come first, from the working directory up to the repository
// root (the nearest ancestor holding `.git`; the working directory alone
// outside a repository), and in each directory `.harness/skills`,
// `.claude/skills` and `.agents/skills` (commands: `.harness/commands`,
// `.claude/commands`). The user's roots follow:
// $XDG_CONFIG_HOME/harness/skills (default ~/.config/harness/skills), then
// ~/.claude/skills (commands: $XDG_CONFIG_HOME/harness/commands,
// ~/.claude/commands). A name found twice is taken from the first root in
// that order (the nearer one); the others are listed as shadowed.
//
// A file that cannot be used (no frontmatter in a SKILL.md, no description,
// YAML that does not parse, a bad name) is skipped with a [Warning] naming
// the file and line; nothing else stops. Unknown frontmatter keys are
// ignored, as Claude Code's files carry more than this package reads.
//
// # Commands
//
// A command file's name (without `.md`) is the command name; a
// subdirectory namespaces it (`git/commit.md` is `/git:commit`). Its
// frontmatter is optional. [Expand] substitutes `$ARGUMENTS` (the whole
// argument text) and `$1`, `$2`, … (the arguments split at blanks, quotes
// grouping); a body with neither gets the arguments appended as
// "ARGUMENTS: …", as Claude Code does. When the command runs, each bash
// line (`!` before a backquoted command) runs as a bash tool call of the
// session and its output takes its place, and each `@file` that names a
// file is read with the read tool and appended: both through the tools
// pipeline, so the permission rules, hooks, approvals and the sandbox
// decide as for the model's own calls.
package skills

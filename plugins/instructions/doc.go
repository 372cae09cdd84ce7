// Package instructions is the instructions plugin: it puts the project's
// instruction files — AGENTS.md (the cross-tool convention) and CLAUDE.md —
// into the system prompt.
//
// # Discovery
//
// For the working directory of the assembly (the agent session's, else the
// process's), every directory from the repository root down to the working
// directory is searched for the configured file names, in that order; the
// repository root is the nearest ancestor holding a `.git` entry, or the
// file-system root outside a repository. The user-level file
// $XDG_CONFIG_HOME/harness/AGENTS.md (default ~/.config/harness/AGENTS.md)
// comes first. Nearer files come later, so the more specific wins. A file
// reached twice (CLAUDE.md a symlink to AGENTS.md) is included once.
//
// # Imports
//
// A token `@path` in a file (outside code spans and fenced blocks) imports
// another file, as Claude Code documents: relative paths resolve against
// the importing file's directory, `~/` against the home directory. Imports
// nest up to MaxImportDepth levels; a file already on the import chain is
// not imported again (no cycles). The resolved target (symlinks followed)
// must be a regular file inside the instruction root (the repository root,
// else the directory of the top-level file; the user-level directory for
// the user file): an import that escapes it, loops through symlinks, or
// cannot be read is left out with a visible note. Imported files follow the
// file that imports them, each under its own heading.
//
// # The section
//
// Everything is one prompt section, [SectionName], with interpolate off
// (a `{{` in a file is text, never a template), at order 9950 (after the
// tool guidance, before the environment facts). Each file appears under a
// heading naming its path. A file larger than MaxBytes is cut at a UTF-8
// boundary with a note saying so. The text is cached per working
// directory and rebuilt only when a candidate file appears, disappears or
// changes (size or modification time), so an unchanged prompt costs a few
// stat calls per step and never breaks the provider's prompt cache.
package instructions

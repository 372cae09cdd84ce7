// Package toolfs is the tool-fs plugin: the model-facing read, write and edit
// tools over the local filesystem (dsh `dsh-tool-fs` with `fs-local` and the
// `fs-observation-policy`, contract B2–B4 of tools-and-prompt.md).
//
//	read  — numbered lines "N: text" in a <path>/<type>/<content> envelope;
//	        offset/limit window (default and max 2000 lines), 2000-character
//	        line cap, 50 KiB output cap, exact continuation footers; NUL bytes,
//	        invalid UTF-8 and directories are refused.
//	write — create or fully replace; atomic (temporary file + rename, or + link
//	        for a create that must not clobber); keeps the file's mode.
//	edit  — literal old_string → new_string, unique by default or replace_all;
//	        CRLF files keep CRLF; atomic.
//
// Read-before-write: per owner (the calling agent's scope), FS remembers the
// version of every file it read, wrote or edited. Overwriting or editing a file
// the owner never read is refused with FS_NOT_OBSERVED; a file that changed since
// is refused with FS_STALE_VERSION. Unscoped calls (the `harness tool` CLI) are
// not subject to the policy. Relative paths resolve against the session
// working directory. read is parallel-safe; write and edit are exclusive and
// serialized inside FS as well.
package toolfs

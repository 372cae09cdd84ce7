// Package toolsearch is the tool-search plugin: the model-facing grep and glob
// tools (dsh `dsh-tool-fs-search`; contract B5–B6 of tools-and-prompt.md).
//
// When `rg` is on PATH and the subprocess service is mounted, both tools run
// ripgrep through that service (argv only, never a shell, `--no-config`, and
// `--json` for grep); otherwise a pure-Go implementation walks the tree with the
// same rules (doublestar globs, Go regexp, .gitignore/.ignore/.rgignore and
// .git/info/exclude honoured for grep, hidden files skipped by grep and listed
// by glob, VCS metadata directories never listed, symlinks not followed). Both
// paths return the same canonical values, which the tests check on a fixture
// tree:
//
//	grep — matches sorted by path then line, rendered grouped by file with
//	       "Line N: preview" lines (previews capped at 2000 bytes), at most 250
//	       inline, "No matches found" when empty;
//	glob — files only, a pattern without "/" matching the name at any depth,
//	       newest first, at most 100 inline, "No files found" when empty.
//
// Over-cap results are saved complete to the spill store when one is mounted
// and the rendered page says where. When a read policy is mounted
// (tools.ReadPolicyKey; the permission plugin provides it), grep withholds the
// matches in files whose reading it denies and says how many and by which
// rules. Paths inside the session working directory
// are shown relative to it. Both tools are parallel-safe.
//
// Known differences between the two paths: Go's RE2 syntax differs from Rust's
// regex in rare constructs (look-around is unsupported in both); a file with a
// NUL byte in its first 64 KiB is skipped by both, but ripgrep's exact binary
// cut-off for later NUL bytes depends on its buffer sizes.
package toolsearch

// Package toolbash is the tool-bash plugin: the model-facing bash tool (dsh
// `dsh-tool-bash` over the `dsh-bash-local` executor; contract B1 of
// tools-and-prompt.md and A14 of subprocess-spill-tokenmeter.md).
//
// Every call runs `bash -c <command>` in a fresh non-login, non-interactive
// shell (no rc files, no state between calls) through the subprocess service,
// in its own process group, with stdin ignored, the credential-scrubbed
// environment plus NO_COLOR=1 TERM=dumb PAGER=cat GIT_PAGER=cat. Each stream is
// collected separately (not merged): a 64 000-byte in-memory tail, with the
// complete stream in a private spill file once the tail overflows (up to
// 64 MiB); when a spill store that adopts files is mounted, that file moves into
// the call's session spill directory (private, deleted at exit; bug case B25)
// and the rendered marker names it there. The deadline (default 120 s, at most 600 s) sends SIGTERM to the
// whole process group, then SIGKILL after a 3 s grace, and the call returns only
// once the group is gone, so background children and pipelines never outlive it.
//
// The result text is assembled exactly as B1 (see Render). A non-zero exit and a
// timeout are results, not errors; a spawn failure (such as a missing workdir)
// is an error. bash is an exclusive tool.
package toolbash

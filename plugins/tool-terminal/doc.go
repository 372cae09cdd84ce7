// Package toolterminal is the tool-terminal plugin: background shells
// (Claude Code's Bash run_in_background with BashOutput and KillShell;
// dsh's jobs).
//
// A bash call with `run_in_background: true` does not run the bash tool's
// body: once the call passed the permission checks (the same rules,
// autoAllowSandboxed and `sandbox: "off"` escalation as every bash call),
// this plugin's tools/execute listener starts `bash -c <command>` through
// the subprocess service with the bash tool's working directory,
// environment and sandbox request, stdin a pipe and no deadline, and
// answers with a bash value of kind "background" naming the shell
// ("shell-1"), which the bash tool renders and presents.
//
//	bash {command, run_in_background: true} ─► "[started in the background as shell shell-1]"
//	bash_output {shell_id, wait_ms?}         ─► new stdout, [stderr] new stderr, [shell shell-1: running | exited with code N | killed (signal SIG)]
//	write_stdin {shell_id, input, close_stdin?, wait_ms?} ─► the same, after writing
//	kill_shell {shell_id}                    ─► SIGTERM to the whole range, SIGKILL after grace; returns once it is gone
//
// Each stream keeps a bounded tail in memory (maxOutputBytes) and the
// complete stream in a private spill file up to maxSpillBytes; a read whose
// bytes already left memory says how many and names the file. When the
// shell's bash exits, whatever it left running is terminated too (as for a
// foreground call), and the model is told with the result of its next tool
// call, or before its next prompt: "[background shell shell-1 (cmd) exited
// with code 3; …]", once. Shells belong to the session whose call started
// them: other sessions cannot see them; when the session closes
// (lifecycle.SessionEnd) its shells and those of its subagents are killed
// and their spill files removed; when the plugin unloads, all are.
//
// When the commands registry is mounted before it, the plugin adds /tasks
// (the front end's session's shells as a Markdown table; the terminal UI
// runs it).
//
// bash_output is read-only; kill_shell is internal (it stops only what the
// agent started); write_stdin is neither, so the permission plugin asks for
// it (headless: a denial), since what a shell reads may be commands no
// rule has seen.
package toolterminal

// Package toolpowershell is the tool-powershell plugin: the powershell
// tool, one fresh non-interactive PowerShell per call over the subprocess
// service, beside bash.
//
//	call ─► tools pipeline (validation, permission, approval) ─► Command ─► subprocess.Run ─► Value ─► Render
//	Command: pwsh -NoLogo -NoProfile -NonInteractive -Command <prelude; script>   (PowerShell 7 on PATH)
//	         powershell.exe … the same flags …                                     (else Windows PowerShell 5.1)
//
// It is registered by default on Windows; elsewhere only with enabled: true
// in its row, and then pwsh must be on PATH. The permission plugin treats
// it as an ordinary tool (its rules are globs over the arguments' JSON),
// not as a shell whose commands it parses: in the default mode every call
// asks unless an allow rule names the tool.
package toolpowershell

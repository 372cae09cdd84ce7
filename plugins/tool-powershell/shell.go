package toolpowershell

import (
	"errors"
	"strings"
)

// Shell is the PowerShell the tool runs.
type Shell struct {
	// Path is the resolved program.
	Path string
	// Core is true for PowerShell 7 (pwsh), false for Windows PowerShell 5.1
	// (powershell.exe).
	Core bool
}

// Name is how the description names the shell.
func (s Shell) Name() string {
	if s.Core {
		return "PowerShell 7 (pwsh)"
	}
	return "Windows PowerShell 5.1 (powershell.exe)"
}

// Prelude runs before every script: no progress records, and UTF-8 for
// what the shell writes and what it sends to native programs (Windows
// PowerShell 5.1 otherwise writes in the console's OEM code page).
const Prelude = "$ProgressPreference = 'SilentlyContinue'; " +
	"[Console]::OutputEncoding = [Text.UTF8Encoding]::new(); " +
	"$OutputEncoding = [Text.UTF8Encoding]::new()\n"

// Argv is the command line of one call: the shell without logo, profile or
// prompts, and the prelude then script as the -Command argument (one
// argument: os/exec quotes it for the Windows command line).
func Argv(s Shell, script string) []string {
	return []string{s.Path, "-NoLogo", "-NoProfile", "-NonInteractive", "-Command", Prelude + script}
}

// FindShell picks pwsh (PowerShell 7) when lookPath finds it, else, on
// Windows (goos "windows"), powershell.exe (Windows PowerShell 5.1, part of
// every Windows). lookPath is exec.LookPath in production.
func FindShell(goos string, lookPath func(string) (string, error)) (Shell, error) {
	if p, err := lookPath("pwsh"); err == nil {
		return Shell{Path: p, Core: true}, nil
	}
	if goos != "windows" {
		return Shell{}, errors.New("tool-powershell: pwsh (PowerShell 7) is not on PATH: install it, or leave enabled unset in the tool-powershell row (outside Windows the tool is off by default)")
	}
	if p, err := lookPath("powershell.exe"); err == nil {
		return Shell{Path: p}, nil
	}
	return Shell{}, errors.New("tool-powershell: neither pwsh (PowerShell 7) nor powershell.exe (Windows PowerShell 5.1) is on PATH")
}

// Description is the tool's model-facing text for shell s.
func Description(s Shell) string {
	return strings.ReplaceAll(strings.TrimSpace(description), "{{shell}}", s.Name())
}

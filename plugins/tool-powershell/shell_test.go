package toolpowershell

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestArgvRunsTheShellNonInteractivelyWithTheUTF8Prelude: one argument
// after -Command, the prelude first, no profile, no logo, no prompts.
func TestArgvRunsTheShellNonInteractivelyWithTheUTF8Prelude(t *testing.T) {
	t.Parallel()
	got := Argv(Shell{Path: `C:\Program Files\PowerShell\7\pwsh.exe`, Core: true}, "Get-ChildItem; if ($?) { 'ok' }")
	want := []string{`C:\Program Files\PowerShell\7\pwsh.exe`, "-NoLogo", "-NoProfile", "-NonInteractive", "-Command",
		"$ProgressPreference = 'SilentlyContinue'; [Console]::OutputEncoding = [Text.UTF8Encoding]::new(); $OutputEncoding = [Text.UTF8Encoding]::new()\n" +
			"Get-ChildItem; if ($?) { 'ok' }"}
	if !slices.Equal(got, want) {
		t.Errorf("Argv =\n%q\nwant\n%q", got, want)
	}
}

// TestFindShellPrefersPwshThenWindowsPowerShellOnWindowsOnly: pwsh 7
// wherever it is on PATH; powershell.exe 5.1 only on Windows; a clear
// error otherwise.
func TestFindShellPrefersPwshThenWindowsPowerShellOnWindowsOnly(t *testing.T) {
	t.Parallel()
	on := func(names ...string) func(string) (string, error) {
		return func(name string) (string, error) {
			if slices.Contains(names, name) {
				return `C:\bin\` + name, nil
			}
			return "", errors.New("not found")
		}
	}
	for _, tc := range []struct {
		goos  string
		path  []string
		want  Shell
		error string
	}{
		{"windows", []string{"pwsh", "powershell.exe"}, Shell{Path: `C:\bin\pwsh`, Core: true}, ""},
		{"windows", []string{"powershell.exe"}, Shell{Path: `C:\bin\powershell.exe`}, ""},
		{"windows", nil, Shell{}, "neither pwsh (PowerShell 7) nor powershell.exe"},
		{"linux", []string{"pwsh"}, Shell{Path: `C:\bin\pwsh`, Core: true}, ""},
		{"linux", []string{"powershell.exe"}, Shell{}, "pwsh (PowerShell 7) is not on PATH"},
	} {
		got, err := FindShell(tc.goos, on(tc.path...))
		if got != tc.want || (tc.error == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.error) {
			t.Errorf("%s %v: got %+v, %v; want %+v, %q", tc.goos, tc.path, got, err, tc.want, tc.error)
		}
	}
}

// TestDescriptionNamesTheShellAndThe51Differences: the model is told which
// PowerShell runs and how 5.1's syntax differs.
func TestDescriptionNamesTheShellAndThe51Differences(t *testing.T) {
	t.Parallel()
	d51 := Description(Shell{Path: "powershell.exe"})
	for _, s := range []string{"The shell is Windows PowerShell 5.1 (powershell.exe).", "no `&&` and `||`", "`cmd1; if ($?) { cmd2 }`",
		"[Console]::OutputEncoding", "$LASTEXITCODE", "curl.exe", "no OS sandbox"} {
		if !strings.Contains(d51, s) {
			t.Errorf("description does not say %q", s)
		}
	}
	if d7 := Description(Shell{Path: "pwsh", Core: true}); !strings.Contains(d7, "The shell is PowerShell 7 (pwsh).") || strings.Contains(d7, "{{") {
		t.Errorf("pwsh description: %s", d7)
	}
}

// TestOnByDefaultOnWindowsOnly: unset, the tool is registered on Windows
// only; enabled decides everywhere.
func TestOnByDefaultOnWindowsOnly(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	for _, tc := range []struct {
		enabled *bool
		goos    string
		want    bool
	}{{nil, "windows", true}, {nil, "linux", false}, {nil, "darwin", false}, {&yes, "linux", true}, {&no, "windows", false}} {
		if got := (Config{Enabled: tc.enabled}).On(tc.goos); got != tc.want {
			t.Errorf("enabled %v on %s: %v, want %v", tc.enabled, tc.goos, got, tc.want)
		}
	}
}

// TestRenderReportsStreamsAndHowTheScriptEnded.
func TestRenderReportsStreamsAndHowTheScriptEnded(t *testing.T) {
	t.Parallel()
	one := 1
	for _, tc := range []struct {
		v    Value
		want string
	}{
		{Value{}, "(no output)"},
		{Value{Stdout: Stream{Text: "hi\r\n"}}, "hi\r\n"},
		{Value{Stdout: Stream{Text: "a"}, Stderr: Stream{Text: "oops"}, ExitCode: &one}, "a\n[stderr]\noops\n[exit code: 1]"},
		{Value{Stdout: Stream{Text: "tail", Truncated: true, SpillPath: `C:\t\o.log`}}, "tail\n[output truncated; full output: C:\\t\\o.log]\n"},
		{Value{TimedOut: true, TimeoutMs: 200, ExitCode: &one}, "(no output)\n[timed out after 200ms]\n[exit code: 1]"},
	} {
		if got := Render(tc.v); got != tc.want {
			t.Errorf("Render(%+v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

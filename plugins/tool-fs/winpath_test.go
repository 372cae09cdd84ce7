package toolfs

import "testing"

// TestWindowsPathTakesDrivePathsInEveryForm: drive letters, MSYS drive
// paths, forward slashes and UNC names become what Windows APIs take;
// relative and drive-less rooted paths keep their meaning.
func TestWindowsPathTakesDrivePathsInEveryForm(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`C:\work\a.go`:      `C:\work\a.go`,
		`c:\work\a.go`:      `C:\work\a.go`,
		`C:/work/a.go`:      `C:\work\a.go`,
		`/c/Users/me/x.txt`: `C:\Users\me\x.txt`,
		`/d`:                `D:\`,
		`/d/`:               `D:\`,
		`//srv/share/f.txt`: `\\srv\share\f.txt`,
		`\\srv\share\f.txt`: `\\srv\share\f.txt`,
		`src/main.go`:       `src\main.go`,
		`/tmp/x`:            `\tmp\x`,
		`/cc/x`:             `\cc\x`,
		`c:rel`:             `C:rel`,
		``:                  ``,
	} {
		if got := WindowsPath(in); got != want {
			t.Errorf("WindowsPath(%q) = %q, want %q", in, got, want)
		}
	}
}

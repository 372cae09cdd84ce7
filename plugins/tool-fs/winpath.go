package toolfs

import "strings"

// WindowsPath rewrites a path the way a model working on Windows may write
// it into the form the Windows file APIs take, without touching the file
// system (it is plain string work, the same on every OS, and Resolve
// applies it on Windows only):
//
//   - an MSYS / Git Bash drive path becomes a drive path: /c/Users/x → C:\Users\x, /d → D:\
//   - forward slashes become backslashes: C:/work/a.go → C:\work\a.go, //srv/share/f → \\srv\share\f
//   - a drive letter is upper-cased: c:\x → C:\x
//
// A relative path keeps its meaning (a/b → a\b); a rooted path without a
// drive (\tmp\x) stays rooted on the current drive, as Windows reads it.
func WindowsPath(p string) string {
	p = strings.ReplaceAll(p, "/", `\`)
	if len(p) >= 2 && p[0] == '\\' && isDriveLetter(p[1]) && (len(p) == 2 || p[2] == '\\') {
		rest := p[2:]
		if rest == "" {
			rest = `\`
		}
		p = string(p[1]) + ":" + rest
	}
	if len(p) >= 2 && p[1] == ':' && isDriveLetter(p[0]) {
		p = strings.ToUpper(p[:1]) + p[1:]
	}
	return p
}

func isDriveLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

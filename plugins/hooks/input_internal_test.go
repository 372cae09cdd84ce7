package hooks

import "testing"

// tool_input.file_path reaches hooks absolute, as Claude Code documents;
// other arguments and absolute paths are passed as written.
func TestToolInputFilePathIsAbsolute(t *testing.T) {
	h := &runner{cwd: "/work/repo"}
	for in, want := range map[string]string{
		`{"file_path":"src/a.go","content":"x"}`:    `{"content":"x","file_path":"/work/repo/src/a.go"}`,
		`{"file_path":"/etc/hosts"}`:                `{"file_path":"/etc/hosts"}`,
		`{"command":"ls"}`:                          `{"command":"ls"}`,
		`{"file_path":"../up.txt","old_string":""}`: `{"file_path":"/work/up.txt","old_string":""}`,
	} {
		if got := string(h.toolInput(in)); got != want {
			t.Errorf("toolInput(%s) = %s, want %s", in, got, want)
		}
	}
}

package permission

import (
	"encoding/json"
	"testing"
)

// FuzzEvaluate: any command line evaluates without panicking, and a line
// containing a denied command is never allowed.
func FuzzEvaluate(f *testing.F) {
	for _, s := range []string{"git status", "bash <<< 'rm -rf x'", "echo 'rm -rf x' | sh", "$'\\x72m' -rf x", "timeout -s KILL 5 rm -fr x", "echo 'a && b' | rm -rf /", "bash -c \"eval 'rm -rf x'\"", "$(", "a\\\n&& b", "f() { rm -rf /; }; f", "echo ${x:-$(rm -rf y)}"} {
		f.Add(s)
	}
	spec := defaultSpec(f.TempDir())
	spec.Allow = []string{"bash(echo *)", "bash(git *)"}
	spec.Deny = []string{"bash(rm -rf *)"}
	p, err := New(spec)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args, _ := json.Marshal(map[string]string{"command": line})
		v := p.Evaluate(Call{Tool: "bash", Args: args})
		if v.Decision == Allow && len(line) < 200 {
			parts, _ := splitCommand(line)
			for _, part := range parts {
				for _, form := range part.Forms {
					if compileTextGlob("rm -rf *").match(form) {
						t.Fatalf("allowed %q although part %q is denied", line, form)
					}
				}
			}
		}
	})
}

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A project with a Claude Code command file and a skill, in the shapes
// public repositories have them, on the default manifest, headless:
// `harness run /fix-test calc TestAdd` sends the command's body with its
// arguments as the prompt; the prompt lists the skill by name and
// description; the model loads it with the skill tool, reads the
// checklist beside it, fixes the bug, and the tests pass.
func TestCommandFileAndSkillFixAGoTest(t *testing.T) {
	t.Parallel()
	needTools(t, "go", "bwrap")
	p := newProject(t, map[string]string{
		"go.mod":  "module example.com/calc\n\ngo 1.22\n",
		"calc.go": "// Package calc does arithmetic.\npackage calc\n\n// Add returns a plus b.\nfunc Add(a, b int) int { return a - b }\n",
		"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n" +
			"\tif got := Add(1, 2); got != 3 {\n\t\tt.Errorf(\"Add(1, 2) = %d, want 3\", got)\n\t}\n}\n",
		".claude/commands/fix-test.md": "---\ndescription: Fix a failing Go test\nargument-hint: [package] [test]\n---\n" +
			"The test $2 in package $1 fails. Use the go-testing skill, find the cause, fix the code (not the test), and run the tests.\n",
		".claude/skills/go-testing/SKILL.md": "---\nname: go-testing\ndescription: How to debug and fix failing Go tests in this repository. Use when a go test fails.\n---\n" +
			"# Fixing Go tests\n\n1. Run the one failing test with `go test -run NAME ./...`.\n2. Read checklist.md in this folder before editing.\n3. Fix the code under test; never weaken the assertion.\n",
		".claude/skills/go-testing/checklist.md": "- the failure message names the wrong value\n- the fix is in the function under test\n",
	})
	o := p.run("/fix-test calc TestAdd",
		call("s1", "skill", map[string]any{"name": "go-testing"}),
		read("r1", ".claude/skills/go-testing/checklist.md"),
		read("r2", "calc.go"),
		edit("e1", "calc.go", "return a - b", "return a + b"),
		timedBash("b1", "go test -run TestAdd ./...", "run the test"),
		answer("Fixed Add: it subtracted."),
	)
	o.mustSucceed(t, "Fixed Add: it subtracted.")
	w, err := o.srv.Requests()[0].Wire()
	if err != nil {
		t.Fatal(err)
	}
	var system, user string
	for _, m := range w.Messages {
		switch m.Role {
		case "system":
			system += m.Text()
		case "user":
			user += m.Text()
		}
	}
	if !strings.Contains(user, "The test TestAdd in package calc fails. Use the go-testing skill") || strings.Contains(user, "/fix-test") {
		t.Errorf("the prompt is not the command's body with its arguments:\n%s", user)
	}
	if !strings.Contains(system, "go-testing: How to debug and fix failing Go tests") {
		t.Errorf("the system prompt does not list the skill:\n%s", system)
	}
	if r := o.toolResult(t, "s1"); !strings.Contains(r, "Read checklist.md in this folder") || !strings.Contains(r, filepath.Join(".claude", "skills", "go-testing")) {
		t.Errorf("the skill tool's result:\n%s", r)
	}
	if r := o.toolResult(t, "r1"); !strings.Contains(r, "the fix is in the function under test") {
		t.Errorf("reading the skill's checklist:\n%s", r)
	}
	if r := o.toolResult(t, "b1"); !strings.Contains(r, "ok  \texample.com/calc") {
		t.Errorf("go test after the fix:\n%s", r)
	}
	if b, _ := os.ReadFile(filepath.Join(p.dir, "calc.go")); !strings.Contains(string(b), "return a + b") {
		t.Errorf("calc.go was not fixed:\n%s", b)
	}
}

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
	system, user := o.firstRequest(t, "system"), o.firstRequest(t, "user")
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

// Claude Code's own example of a command file (its docs' /commit): bash
// lines give the model the repository's state, and an @file reference
// the project's conventions. On the default manifest, headless, no -y:
// each `!` line runs as a sandboxed bash call of the session and its
// output replaces the line; the file is read with the read tool and
// appended; a bash line the sandbox refuses (a write outside the
// workspace) leaves its failure in the prompt rather than running; the
// model commits with what it was given.
func TestCommandFileRunsItsBashLinesAndInlinesItsFiles(t *testing.T) {
	t.Parallel()
	needTools(t, "git", "bwrap")
	p := newProject(t, map[string]string{
		"calc.go":         "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
		"CONTRIBUTING.md": "Commit subjects use the imperative mood, at most 50 characters.\n",
		".claude/commands/commit.md": "---\nallowed-tools: Bash(git add:*), Bash(git status:*), Bash(git commit:*)\ndescription: Create a git commit\n---\n\n" +
			"## Context\n\n- Current git status: !`git status --short`\n- Current git diff (staged and unstaged changes): !`git diff HEAD`\n" +
			"- Current branch: !`git branch --show-current`\n- A note outside: !`echo leak > " + "$HOME/outside.txt`\n" +
			"- Conventions: see @CONTRIBUTING.md and @nobody (a mention, not a file)\n\n## Your task\n\nBased on the above changes, create a single git commit. $ARGUMENTS\n",
	})
	hostGit := append(p.env(), "GIT_CONFIG_NOSYSTEM=1")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-qm", "initial"}} {
		if out, err := inDir(t, p.dir, hostGit, "git", args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	writeFile(t, filepath.Join(p.dir, "calc.go"), "package calc\n\n// Add returns a plus b.\nfunc Add(a, b int) int { return a + b }\n")
	o := p.run("/commit Keep it short.",
		bash("c1", "git commit -qam 'Document Add' && git log --format=%s -1", "commit"),
		answer("Committed: Document Add."),
	)
	o.mustSucceed(t, "Committed: Document Add.")
	user := o.firstRequest(t, "user")
	for _, want := range []string{
		"- Current git status:  M calc.go",
		"+// Add returns a plus b.",
		"- Current branch: main",
		"Contents of @CONTRIBUTING.md:",
		"Commit subjects use the imperative mood",
		"@nobody (a mention, not a file)",
		"create a single git commit. Keep it short.",
	} {
		if !strings.Contains(user, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, user)
		}
	}
	if strings.Contains(user, "!`git status") {
		t.Errorf("a bash line was sent as written:\n%s", user)
	}
	if !strings.Contains(user, "outside.txt") || !strings.Contains(user, "ermission denied") && !strings.Contains(user, "ead-only file system") {
		t.Errorf("the refused bash line's failure is not in the prompt:\n%s", user)
	}
	if _, err := os.Stat(filepath.Join(p.home, "outside.txt")); err == nil {
		t.Error("a command file's bash line wrote outside the workspace")
	}
	if !strings.Contains(o.stderr, "/commit: ran `git status --short`") || !strings.Contains(o.stderr, "outside.txt` (failed: its error is in the prompt)") {
		t.Errorf("stderr does not say what the command ran:\n%s", o.stderr)
	}
	if out, _ := inDir(t, p.dir, hostGit, "git", "log", "--format=%s", "-1"); strings.TrimSpace(out) != "Document Add" {
		t.Errorf("the last commit: %q", out)
	}
}

// A skill is also a command, as in Claude Code: `harness run /release-notes
// v1.2` sends the skill, loaded as the skill tool would load it, with its
// arguments and its bash lines run — also for a skill the model may not
// load itself (disable-model-invocation). A skill marked user-invocable:
// false is no command: `/internal …` goes to the model as written.
func TestSkillRunsAsASlashCommand(t *testing.T) {
	t.Parallel()
	needTools(t, "git", "bwrap")
	p := newProject(t, map[string]string{
		"README.md": "calc\n",
		".claude/skills/release-notes/SKILL.md": "---\nname: release-notes\ndescription: Write release notes from the log.\ndisable-model-invocation: true\n---\n" +
			"Write release notes for version $ARGUMENTS.\n\nRecent commits:\n!`git log --format=%s -2`\n",
		".claude/skills/internal/SKILL.md": "---\nname: internal\ndescription: Conventions the model loads itself.\nuser-invocable: false\n---\nUse tabs.\n",
	})
	hostGit := append(p.env(), "GIT_CONFIG_NOSYSTEM=1")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-qm", "Add calc"}, {"commit", "-q", "--allow-empty", "-m", "Fix Add"}} {
		if out, err := inDir(t, p.dir, hostGit, "git", args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	o := p.run("/release-notes v1.2", answer("Release notes written."))
	o.mustSucceed(t, "Release notes written.")
	system, user := o.firstRequest(t, "system"), o.firstRequest(t, "user")
	for _, want := range []string{"Skill release-notes loaded from", "Write release notes for version v1.2.", "Recent commits:\nFix Add\nAdd calc"} {
		if !strings.Contains(user, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, user)
		}
	}
	if strings.Contains(system, "release-notes") {
		t.Errorf("a disable-model-invocation skill is listed for the model:\n%s", system)
	}
	o = p.run("/internal please", answer("ok"))
	o.mustSucceed(t, "ok")
	user = o.firstRequest(t, "user")
	if !strings.Contains(user, "/internal please") || strings.Contains(user, "Use tabs.") {
		t.Errorf("a user-invocable: false skill ran as a command:\n%s", user)
	}
}

// firstRequest is the text of the messages of role in the run's first
// model request, joined.
func (o outcome) firstRequest(t *testing.T, role string) string {
	t.Helper()
	w, err := o.srv.Requests()[0].Wire()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, m := range w.Messages {
		if m.Role == role {
			b.WriteString(m.Text())
		}
	}
	return b.String()
}

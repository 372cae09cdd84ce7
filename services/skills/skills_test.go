package skills_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/services/skills"
)

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// goTesting is a skill in the shape of the public ones: name and
// description, a license, extra keys, and a body naming a file beside it.
const goTesting = `---
name: go-testing
description: >
  Write and repair Go tests. Use when a go test fails
  or a package needs table-driven tests.
license: Apache-2.0
metadata:
  author: harness
  version: "1.0"
---
# Go testing

1. Run ` + "`go test ./...`" + ` and read the first failure.
2. Read reference/table-tests.md before writing a table.
`

// project builds a repository with skills and commands at two levels and a
// user directory; it returns the working directory and the options.
func project(t *testing.T) (string, skills.Options) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	repo := filepath.Join(root, "repo")
	cwd := filepath.Join(repo, "svc")
	write(t, filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(repo, ".claude/skills/go-testing/SKILL.md"), goTesting)
	write(t, filepath.Join(repo, ".claude/skills/go-testing/reference/table-tests.md"), "use t.Run\n")
	// The nearer .agents/skills has its own go-testing: it wins.
	write(t, filepath.Join(cwd, ".agents/skills/go-testing/SKILL.md"), strings.Replace(goTesting, "Write and repair", "Nearer: write and repair", 1))
	write(t, filepath.Join(home, ".claude/skills/pdf/SKILL.md"), "---\nname: pdf\ndescription: Fill and split PDF files.\n---\nUse scripts/fill.py.\n")
	write(t, filepath.Join(repo, ".claude/skills/nofront/SKILL.md"), "# just text\n")
	write(t, filepath.Join(repo, ".claude/skills/nodesc/SKILL.md"), "---\nname: nodesc\n---\nbody\n")
	write(t, filepath.Join(repo, ".claude/skills/badyaml/SKILL.md"), "---\nname: badyaml\ndescription: Use when: it breaks\n---\nbody\n")
	write(t, filepath.Join(repo, ".claude/skills/Bad_Name/SKILL.md"), "---\ndescription: x\n---\n")
	write(t, filepath.Join(repo, ".claude/skills/hidden/SKILL.md"), "---\nname: hidden\ndescription: Only by hand.\ndisable-model-invocation: true\n---\n")
	write(t, filepath.Join(repo, ".claude/commands/fix-test.md"), "---\ndescription: Fix a failing Go test\nargument-hint: [package] [test]\nallowed-tools: Bash(go test:*), Read, Edit\nmodel: haiku\n---\nFix the test $2 in package $1. All: $ARGUMENTS\n")
	write(t, filepath.Join(repo, ".claude/commands/git/commit.md"), "# Commit the staged changes\n\nCurrent status: !`git status`\n")
	write(t, filepath.Join(home, ".claude/commands/fix-test.md"), "user's fix-test\n")
	return cwd, skills.Options{Cwd: cwd, Home: home}
}

func TestDiscoverTakesNearerNamesAndSkipsBadFilesWithFileLine(t *testing.T) {
	cwd, o := project(t)
	repo := filepath.Dir(cwd)
	c := skills.Discover(o)
	var got []string
	for _, s := range c.Skills {
		got = append(got, s.Name+"="+s.Origin)
	}
	if want := "go-testing=project hidden=project pdf=user"; strings.Join(got, " ") != want {
		t.Fatalf("skills: %s, want %s", strings.Join(got, " "), want)
	}
	gt, _ := c.Skill("go-testing")
	if gt.Path != filepath.Join(cwd, ".agents/skills/go-testing/SKILL.md") || len(gt.Shadowed) != 1 ||
		gt.Shadowed[0] != filepath.Join(repo, ".claude/skills/go-testing/SKILL.md") || gt.License != "Apache-2.0" {
		t.Fatalf("go-testing: %+v", gt)
	}
	var warns []string
	for _, w := range c.Warnings {
		warns = append(warns, strings.TrimPrefix(w.String(), repo+"/"))
	}
	want := []string{
		".claude/skills/Bad_Name/SKILL.md:2: name \"Bad_Name\": want lower-case letters, digits and single hyphens, at most 64 characters; the skill is skipped",
		".claude/skills/badyaml/SKILL.md:3: frontmatter: mapping values are not allowed in this context; the skill is skipped",
		".claude/skills/nodesc/SKILL.md:1: the frontmatter has no description (the model chooses skills by it); the skill is skipped",
		".claude/skills/nofront/SKILL.md:1: no frontmatter (a `---` line, then name: and description:, then `---`); the skill is skipped",
	}
	if strings.Join(warns, "\n") != strings.Join(want, "\n") {
		t.Fatalf("warnings:\n%s\nwant\n%s", strings.Join(warns, "\n"), strings.Join(want, "\n"))
	}
	if len(c.Commands) != 2 {
		t.Fatalf("commands: %+v", c.Commands)
	}
	fix, commit := c.Commands[0], c.Commands[1]
	if fix.Name != "fix-test" || fix.Origin != "project" || fix.ArgumentHint != "[package] [test]" || fix.Model != "haiku" ||
		strings.Join(fix.AllowedTools, "|") != "Bash(go test:*)|Read|Edit" || len(fix.Shadowed) != 1 {
		t.Fatalf("fix-test: %+v", fix)
	}
	if commit.Name != "git:commit" || commit.Description != "Commit the staged changes" {
		t.Fatalf("git:commit: %+v", commit)
	}
}

func TestExpandSubstitutesArgumentsAndPositionals(t *testing.T) {
	tests := []struct{ body, args, want string }{
		{"Fix $2 in $1. All: $ARGUMENTS", `calc "TestAdd sub"`, `Fix TestAdd sub in calc. All: calc "TestAdd sub"`},
		{"Missing: [$3] $HOME $0", "a b", "Missing: [] $HOME $0"},
		{"No placeholders.\n", "x y", "No placeholders.\n\nARGUMENTS: x y"},
		{"No placeholders.\n", "", "No placeholders.\n"},
	}
	for _, tt := range tests {
		if got := skills.Expand(tt.body, tt.args); got != tt.want {
			t.Errorf("Expand(%q, %q) = %q, want %q", tt.body, tt.args, got, tt.want)
		}
	}
}

func TestSectionIsByteStableAndListsVisibleSkillsByName(t *testing.T) {
	_, o := project(t)
	first := skills.Render(skills.Discover(o))
	src := skills.NewSource(o)
	for range 3 {
		if got := skills.Render(src.Catalog(o.Cwd)); got != first {
			t.Fatalf("the section changed between assemblies:\n%s\n---\n%s", first, got)
		}
	}
	lines := strings.Split(strings.TrimSpace(first), "\n")
	tail := strings.Join(lines[len(lines)-2:], "\n")
	want := "- go-testing: Nearer: write and repair Go tests. Use when a go test fails or a package needs table-driven tests.\n- pdf: Fill and split PDF files."
	if tail != want {
		t.Fatalf("section tail:\n%s\nwant\n%s", tail, want)
	}
	if strings.Contains(first, "hidden") {
		t.Fatal("a disable-model-invocation skill is listed")
	}
	// A new skill is seen on the next assembly.
	write(t, filepath.Join(o.Cwd, ".harness/skills/api/SKILL.md"), "---\nname: api\ndescription: Design HTTP APIs.\n---\n")
	if got := skills.Render(src.Catalog(o.Cwd)); !strings.Contains(got, "- api: Design HTTP APIs.\n- go-testing:") {
		t.Fatalf("after adding a skill:\n%s", got)
	}
}

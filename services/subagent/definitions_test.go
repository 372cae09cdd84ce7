package subagent_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/dshgo/harness/services/subagent"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func write(t *testing.T, dir, name, text string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDefinitionParsesClaudeCodeFormat(t *testing.T) {
	d, err := subagent.ParseDefinition("reviewer.md", []byte("---\nname: reviewer\ndescription: Reviews diffs\ntools: Read, Grep, Glob\nmodel: inherit\ncolor: blue\n---\nYou review code.\n\nBe strict.\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := subagent.Definition{Name: "reviewer", Description: "Reviews diffs", Tools: []string{"Read", "Grep", "Glob"}, Persona: "You review code.\n\nBe strict.", Path: "reviewer.md"}
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("got %+v\nwant %+v", d, want)
	}
	d, err = subagent.ParseDefinition("x.md", []byte("---\nname: x\ndescription: d\ntools: [read, \"tool-*\"]\nmodel: test/m2\nprovider: codex\n---\n"))
	if err != nil || !reflect.DeepEqual(d.Tools, []string{"read", "tool-*"}) || d.Model != "test/m2" || d.Provider != "codex" || d.Persona != "" {
		t.Fatalf("list form: %+v, %v", d, err)
	}
}

func TestDefinitionErrorsNameFileAndLine(t *testing.T) {
	cases := map[string]string{
		"no front matter":  "# just markdown\n",
		"unclosed":         "---\nname: a\ndescription: b\n",
		"bad yaml":         "---\nname: a\ndescription: [b\n---\n",
		"bad name":         "---\nname: ../etc\ndescription: b\n---\n",
		"no description":   "---\nname: a\n---\n",
		"tools not a list": "---\nname: a\ndescription: b\ntools: {read: true}\n---\n",
		"tab indentation":  "---\nname: a\n\tdescription: b\n---\n",
	}
	want := map[string]string{
		"no front matter":  "a.md:1: an agent definition starts with a YAML front matter line",
		"unclosed":         `a.md:1: the front matter is not closed by a "---" line`,
		"bad yaml":         "a.md:3: did not find expected ',' or ']'",
		"bad name":         `a.md:2: name "../etc": want letters`,
		"no description":   `a.md:2: agent "a" has no description`,
		"tools not a list": "a.md:4: tools: want a comma-separated string or a list",
		"tab indentation":  "a.md:3: found a tab character that violates indentation",
	}
	for name, text := range cases {
		_, err := subagent.ParseDefinition("a.md", []byte(text))
		if err == nil || !strings.HasPrefix(err.Error(), want[name]) {
			t.Errorf("%s: err = %v, want prefix %q", name, err, want[name])
		}
	}
}

func TestLoadDefinitionsPrecedenceAndErrors(t *testing.T) {
	root := t.TempDir()
	dirs := subagent.DefinitionDirs(root, func(k string) (string, bool) {
		if k == "XDG_CONFIG_HOME" {
			return filepath.Join(root, "xdg"), true
		}
		return "", false
	})
	if dirs[0] != filepath.Join(root, ".harness/agents") || dirs[1] != filepath.Join(root, ".claude/agents") || dirs[2] != filepath.Join(root, "xdg/harness/agents") {
		t.Fatalf("dirs = %v", dirs)
	}
	write(t, dirs[0], "a.md", "---\nname: a\ndescription: from harness\n---\n")
	write(t, dirs[1], "a.md", "---\nname: a\ndescription: from claude\n---\n")
	write(t, dirs[1], "b.md", "---\nname: b\ndescription: from claude\n---\n")
	bad := write(t, dirs[2], "c.md", "---\nname: c\ndescription: [\n---\n")
	write(t, dirs[2], "notes.txt", "ignored")
	defs, err := subagent.LoadDefinitions(dirs)
	if err == nil || !strings.Contains(err.Error(), bad+":3:") {
		t.Fatalf("err = %v, want one naming %s:3", err, bad)
	}
	if len(defs) != 2 || defs[0].Description != "from harness" || defs[1].Name != "b" {
		t.Fatalf("defs = %+v", defs)
	}
}

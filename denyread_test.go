package harness_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	harness "github.com/dshgo/harness"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/subprocess/sandbox"
)

// The default denyRead table of docs/sandbox.md is the list the code
// hides: an entry added to one and not the other fails here.
func TestDocsDefaultDenyReadIsTheCodeList(t *testing.T) {
	doc, err := os.ReadFile("docs/sandbox.md")
	if err != nil {
		t.Fatal(err)
	}
	table := regexp.MustCompile("(?s)<!-- default-deny-read -->\n(.*?)<!-- /default-deny-read -->").FindSubmatch(doc)
	if table == nil {
		t.Fatal("docs/sandbox.md: no <!-- default-deny-read --> table")
	}
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllSubmatch(table[1], -1) {
		listed = append(listed, string(m[1]))
	}
	if want := sandbox.DefaultDenyRead(); !slices.Equal(listed, want) {
		t.Errorf("docs/sandbox.md lists\n  %s\nsandbox.DefaultDenyRead is\n  %s", strings.Join(listed, " "), strings.Join(want, " "))
	}
}

// The default manifest's sandbox hides exactly the default list: it names
// the list ("@defaults") instead of keeping a copy that drifts.
func TestDefaultManifestDenyReadIsTheDefaultList(t *testing.T) {
	var m struct {
		Plugins []struct {
			Name   string    `yaml:"name"`
			Config yaml.Node `yaml:"config"`
		} `yaml:"plugins"`
	}
	if err := yaml.Unmarshal(harness.DefaultManifest, &m); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(m.Plugins, func(p struct {
		Name   string    `yaml:"name"`
		Config yaml.Node `yaml:"config"`
	}) bool {
		return p.Name == "subprocess-local"
	})
	if i < 0 {
		t.Fatal("default manifest: no subprocess-local row")
	}
	var o subprocess.Options
	if err := m.Plugins[i].Config.Decode(&o); err != nil {
		t.Fatal(err)
	}
	if got, want := []string(o.Sandbox.DenyRead), sandbox.DefaultDenyRead(); !slices.Equal(got, want) {
		t.Errorf("default manifest denyRead\n  %s\nwant sandbox.DefaultDenyRead\n  %s", strings.Join(got, " "), strings.Join(want, " "))
	}
	if !strings.Contains(string(harness.DefaultManifest), `denyRead: ["@defaults"]`) {
		t.Error(`default manifest: want denyRead: ["@defaults"], not a copy of the list`)
	}
}

// Every test the threat-model tables of docs/sandbox.md and docs/policy.md
// name exists, so a row cannot point at a test that was renamed away.
func TestThreatModelTablesNameRealTests(t *testing.T) {
	var src strings.Builder
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "node_modules" {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, "_test.go") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			src.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{"docs/sandbox.md", "docs/policy.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		sec := regexp.MustCompile(`(?s)#+ Threat model[^\n]*\n(.*?)\n#`).FindSubmatch(b)
		if sec == nil {
			t.Fatalf("%s: no threat model section", doc)
		}
		names := regexp.MustCompile("`(Test[A-Za-z0-9_]+)`").FindAllSubmatch(sec[1], -1)
		if len(names) < 5 {
			t.Errorf("%s: the threat model names only %d tests", doc, len(names))
		}
		for _, n := range names {
			if !strings.Contains(src.String(), "func "+string(n[1])+"(") {
				t.Errorf("%s names %s, which no test file defines", doc, n[1])
			}
		}
	}
}

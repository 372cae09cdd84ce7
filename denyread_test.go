package harness_test

import (
	"os"
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

package manifest_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/manifest"
)

type listCfg struct {
	ReadOnly []string `yaml:"readOnly"`
	Mode     string   `yaml:"mode"`
}

func (c *listCfg) SetDefaults() { c.ReadOnly = []string{"read", "grep"} }

var listPlugin = core.Define("list-test", func(*core.Context, listCfg) error { return nil })

func decodeList(t *testing.T, m *manifest.Manifest) listCfg {
	t.Helper()
	v, err := manifest.DecodeConfig(listPlugin, m.Plugins[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	return *v.(*listCfg)
}

// `key: !append [...]` in a patch extends the row's list, or, when the row
// does not set the key, the plugin's default list; appends stack.
func TestPatchAppendExtendsAList(t *testing.T) {
	for _, tc := range []struct {
		name, base string
		patches    []string
		want       []string
	}{
		{"the row's list",
			"plugins:\n  - id: a\n    name: list-test\n    config: {readOnly: [x]}\n",
			[]string{"- id: a\n  config:\n    readOnly: !append [word_count]\n"},
			[]string{"x", "word_count"}},
		{"the plugin's default when the row has no such key",
			"plugins:\n  - id: a\n    name: list-test\n    config: {mode: m}\n",
			[]string{"- id: a\n  config:\n    readOnly: !append [word_count]\n"},
			[]string{"read", "grep", "word_count"}},
		{"the plugin's default when the row has no config",
			"plugins:\n  - {id: a, name: list-test}\n",
			[]string{"- {id: a, config: {readOnly: !append [w1]}}\n", "- {id: a, config: {readOnly: !append [w2]}}\n"},
			[]string{"read", "grep", "w1", "w2"}},
		{"two patches over the row's list",
			"plugins:\n  - {id: a, name: list-test, config: {readOnly: []}}\n",
			[]string{"- {id: a, config: {readOnly: !append [w1]}}\n", "- {id: a, config: {readOnly: !append [w2]}}\n"},
			[]string{"w1", "w2"}},
		{"a plain list after an append replaces",
			"plugins:\n  - {id: a, name: list-test}\n",
			[]string{"- {id: a, config: {readOnly: !append [w1]}}\n", "- {id: a, config: {readOnly: [only]}}\n"},
			[]string{"only"}},
		{"in harness.yml itself: the default plus the items",
			"plugins:\n  - {id: a, name: list-test, config: {readOnly: !append [w]}}\n",
			nil,
			[]string{"read", "grep", "w"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := decodeList(t, compose(t, tc.base, tc.patches...))
			if !slices.Equal(got.ReadOnly, tc.want) {
				t.Fatalf("readOnly = %q, want %q", got.ReadOnly, tc.want)
			}
		})
	}
}

// Every misuse of !append is an error naming the file, line and column.
func TestPatchAppendErrorsNameTheirPlace(t *testing.T) {
	const base = "plugins:\n  - id: a\n    name: list-test\n    config:\n      readOnly: [x]\n      mode: m\n"
	for _, tc := range []struct{ name, patch, want string }{
		{"on a scalar", "- id: a\n  config:\n    mode: !append x\n",
			"p1.yml:3:11: !append takes a list"},
		{"nested", "- id: a\n  config:\n    readOnly: [!append [y]]\n",
			"p1.yml:3:16: !append is only allowed on a top-level config key"},
		{"on the whole config", "- id: a\n  config: !append [y]\n",
			"p1.yml:2:11: !append goes on a top-level config key"},
		{"outside config", "- id: a\n  disabled: !append [true]\n",
			"p1.yml:2:13: !append is only allowed on a top-level key of a plugin's config"},
		{"to a value that is not a list", "- id: a\n  config:\n    mode: !append [y]\n",
			`p1.yml:3:11: patch row "a": config key mode: !append: the value it appends to (harness.yml:6:13) is not a list`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := manifest.Parse("harness.yml", []byte(base))
			if err != nil {
				t.Fatal(err)
			}
			p, err := manifest.ParsePatch("p1.yml", []byte(tc.patch))
			if err == nil {
				_, err = manifest.Compose(m, p)
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant %s…", err, tc.want)
			}
		})
	}
	// A field that is not a list is reported when the config is decoded.
	m := compose(t, "plugins:\n  - {id: a, name: list-test}\n", "- id: a\n  config:\n    mode: !append [y]\n")
	_, err := manifest.DecodeConfig(listPlugin, m.Plugins[0], nil)
	want := `p1.yml:3:11: plugin "list-test" (id a): invalid config: mode: !append needs a list field, mode is string`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	// In harness.yml too.
	_, err = manifest.Parse("harness.yml", []byte("plugins:\n  - {id: a, name: list-test, config: {readOnly: {k: !append [y]}}}\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "harness.yml:2:53: !append is only allowed on a top-level config key") {
		t.Fatalf("err = %v", err)
	}
}

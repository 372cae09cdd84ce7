package manifest_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/manifest"
	"gopkg.in/yaml.v3"
)

// compose parses base (harness.yml) and each patch (p1.yml, p2.yml, …) and
// composes them.
func compose(t *testing.T, base string, patches ...string) *manifest.Manifest {
	t.Helper()
	m, err := manifest.Parse("harness.yml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	var ps []*manifest.Patch
	for i, p := range patches {
		pt, err := manifest.ParsePatch("p"+string(rune('1'+i))+".yml", []byte(p))
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, pt)
	}
	out, err := manifest.Compose(m, ps...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// configText renders a row's config as flow YAML ("" when absent).
func configText(t *testing.T, e manifest.Entry) string {
	t.Helper()
	if e.Config == nil {
		return ""
	}
	n := plain(e.Config)
	n.Style = yaml.FlowStyle
	out, err := yaml.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// plain copies n without styles (quotes) or positions.
func plain(n *yaml.Node) *yaml.Node {
	c := *n
	c.Style, c.Line, c.Column = 0, 0, 0
	c.Content = nil
	for _, k := range n.Content {
		c.Content = append(c.Content, plain(k))
	}
	return &c
}

// A patch's config is merged into the row's config at the top level: the
// keys it gives replace theirs, `key: ~` removes one, the rest are kept —
// so `mode: bypass` in a patch keeps the row's deny rules.
func TestPatchMergesConfigAtTopLevel(t *testing.T) {
	const base = `plugins:
  - id: permission
    name: permission
    config:
      mode: default
      allow: ["bash(ls *)"]
      deny: ["bash(rm -rf *)"]
      shellTools: {bash: command}
`
	for _, tc := range []struct {
		name    string
		patches []string
		want    string
	}{
		{"a key given replaces, the others are kept",
			[]string{"- {id: permission, config: {mode: bypass}}\n"},
			`{mode: bypass, allow: [bash(ls *)], deny: [bash(rm -rf *)], shellTools: {bash: command}}`},
		{"a list is replaced, not appended to",
			[]string{"- {id: permission, config: {deny: ['bash(sudo *)']}}\n"},
			`{mode: default, allow: [bash(ls *)], deny: [bash(sudo *)], shellTools: {bash: command}}`},
		{"a nested mapping is replaced, not merged",
			[]string{"- {id: permission, config: {shellTools: {sh: cmd}}}\n"},
			`{mode: default, allow: [bash(ls *)], deny: [bash(rm -rf *)], shellTools: {sh: cmd}}`},
		{"key: ~ removes the key",
			[]string{"- {id: permission, config: {allow: ~, cwd: /srv}}\n"},
			`{mode: default, deny: [bash(rm -rf *)], shellTools: {bash: command}, cwd: /srv}`},
		{"config: ~ resets the row to its defaults",
			[]string{"- {id: permission, config: ~}\n"},
			``},
		{"config: ~ then a config replaces it whole",
			[]string{"- {id: permission, config: ~}\n- {id: permission, config: {mode: plan}}\n"},
			`{mode: plan}`},
		{"layers merge in order",
			[]string{"- {id: permission, config: {mode: bypass}}\n", "- {id: permission, config: {allow: []}}\n"},
			`{mode: bypass, allow: [], deny: [bash(rm -rf *)], shellTools: {bash: command}}`},
		{"a patch that renames the plugin replaces the config",
			[]string{"- {id: permission, name: other, config: {x: 1}}\n"},
			`{x: 1}`},
		{"a non-mapping config replaces",
			[]string{"- {id: permission, config: [1]}\n"},
			`[1]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := compose(t, base, tc.patches...)
			if got := configText(t, m.Plugins[0]); got != tc.want {
				t.Fatalf("config = %s\nwant     %s", got, tc.want)
			}
		})
	}
	// A row without config takes the patch's mapping (minus removals).
	m := compose(t, "plugins:\n  - {id: a, name: tool-test}\n", "- {id: a, config: {locale: en, limit: ~}}\n")
	if got := configText(t, m.Plugins[0]); got != "{locale: en}" {
		t.Fatalf("config = %s", got)
	}
}

// After a merge, a problem in a kept key is reported in the file that wrote
// it, and a problem in a patched key in the patch file.
func TestMergedConfigErrorsNameTheFileOfEachKey(t *testing.T) {
	m := compose(t, "plugins:\n  - id: a\n    name: tool-test\n    config:\n      timeout: -1s\n      locale: en\n",
		"- id: a\n  config:\n    locale: fr\n    limit: lots\n")
	_, err := manifest.DecodeConfig(testPlugin, m.Plugins[0], nil)
	want := "p1.yml:4:12: plugin \"tool-test\" (id a): invalid config: limit: cannot unmarshal !!str `lots` into int"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	m = compose(t, "plugins:\n  - id: a\n    name: tool-test\n    config:\n      timeout: -1s\n      locale: en\n",
		"- id: a\n  config:\n    locale: fr\n")
	_, err = manifest.DecodeConfig(testPlugin, m.Plugins[0], nil)
	want = `harness.yml:5:16: plugin "tool-test" (id a): invalid config: timeout: must be positive`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	if m.Plugins[0].Source != "p1.yml" || m.Plugins[0].ConfigSources["timeout"] != "harness.yml" {
		t.Fatalf("sources: %s %v", m.Plugins[0].Source, m.Plugins[0].ConfigSources)
	}
}

type multiConfig struct {
	BaseURL string   `yaml:"baseURL"`
	Models  []string `yaml:"models"`
	Steps   int      `yaml:"steps"`
	Grace   int      `yaml:"grace"`
}

// Validate reports its problems the two ways plugins do: errors.Join of
// "path: message" errors, or a *core.ConfigError with several issues.
func (c multiConfig) Validate() error {
	if c.Steps < 0 {
		return &core.ConfigError{Issues: []core.Issue{
			{Path: "steps", Message: "must not be negative"},
			{Path: "grace", Message: "must be set with steps"},
		}}
	}
	var errs []error
	if c.BaseURL == "" {
		errs = append(errs, errors.New(`baseURL: must be an http(s) URL, got ""`))
	}
	if len(c.Models) == 0 {
		errs = append(errs, errors.New("models: at least one model is required"))
	}
	return errors.Join(errs...)
}

var multiPlugin = core.Define("multi", func(*core.Context, multiConfig) error { return nil })

// Every problem of a config is reported with its own FILE:LINE:COL: the
// field's node when the config has it, else the row's config node.
func TestDecodeConfigPlacesEveryProblem(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"errors.Join from Validate", "plugins:\n  - id: local\n    name: multi\n    config:\n      baseURL: \"\"\n      steps: 1\n",
			[]string{
				`harness.yml:5:16: plugin "multi" (id local): invalid config: baseURL: must be an http(s) URL, got ""`,
				`harness.yml:5:7: plugin "multi" (id local): invalid config: models: at least one model is required`,
			}},
		{"ConfigError with several issues", "plugins:\n  - id: m\n    name: multi\n    config:\n      steps: -1\n      grace: 2\n",
			[]string{
				`harness.yml:5:14: plugin "multi" (id m): invalid config: steps: must not be negative`,
				`harness.yml:6:14: plugin "multi" (id m): invalid config: grace: must be set with steps`,
			}},
		{"several unknown keys", "plugins:\n  - id: m\n    name: multi\n    config:\n      baseUrl: x\n      model: [a]\n",
			[]string{
				`harness.yml:5:7: plugin "multi" (id m): invalid config: unknown key "baseUrl" (allowed: baseURL, grace, models, steps)`,
				`harness.yml:6:7: plugin "multi" (id m): invalid config: unknown key "model" (allowed: baseURL, grace, models, steps)`,
			}},
		{"several values of the wrong type", "plugins:\n  - id: m\n    name: multi\n    config: {steps: x, grace: 1.5, models: {a: 1}}\n",
			[]string{
				`harness.yml:4:31: plugin "multi" (id m): invalid config: grace: want an integer, got 1.5`,
			}},
		{"several decode failures", "plugins:\n  - id: m\n    name: multi\n    config: {steps: x, grace: y}\n",
			[]string{
				"harness.yml:4:21: plugin \"multi\" (id m): invalid config: steps: cannot unmarshal !!str `x` into int",
				"harness.yml:4:31: plugin \"multi\" (id m): invalid config: grace: cannot unmarshal !!str `y` into int",
			}},
		{"several unset variables", "plugins:\n  - id: m\n    name: multi\n    config: {baseURL: !env NO_URL, models: [!env NO_MODEL]}\n",
			[]string{
				`harness.yml:4:23: plugin "multi" (id m): environment variable NO_URL is not set (set it, or write !env [NO_URL, default])`,
				`harness.yml:4:45: plugin "multi" (id m): environment variable NO_MODEL is not set (set it, or write !env [NO_MODEL, default])`,
			}},
		{"no config at all: the row", "plugins:\n  - id: m\n    name: multi\n",
			[]string{
				`harness.yml:2:5: plugin "multi" (id m): invalid config: baseURL: must be an http(s) URL, got ""`,
				`harness.yml:2:5: plugin "multi" (id m): invalid config: models: at least one model is required`,
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := manifest.Parse("harness.yml", []byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			_, err = manifest.DecodeConfig(multiPlugin, m.Plugins[0], func(string) (string, bool) { return "", false })
			if err == nil {
				t.Fatal("no error")
			}
			if got, want := err.Error(), strings.Join(tc.want, "\n"); got != want {
				t.Fatalf("err =\n%s\nwant\n%s", got, want)
			}
			var me *manifest.Error
			if !errors.As(err, &me) {
				t.Fatalf("not a *manifest.Error: %T", err)
			}
		})
	}
}

// `harness config` names the file of the keys a merge kept from an earlier
// file.
func TestDumpNamesTheFileOfKeptKeys(t *testing.T) {
	m := compose(t, "plugins:\n  - id: a\n    name: tool-test\n    config: {timeout: 1s, locale: en, limit: 3}\n",
		"- {id: a, config: {locale: fr}}\n")
	out, err := manifest.Dump(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "# source: p1.yml; config keys limit, timeout from harness.yml\n"; !strings.Contains(string(out), want) {
		t.Fatalf("dump:\n%s\nwant containing %q", out, want)
	}
}

// A config field's schema default is the value SetDefaults gives it;
// durations read as written in harness.yml; zero values and secrets get none.
func TestSchemaShowsSetDefaults(t *testing.T) {
	s := manifest.ConfigSchema(testPlugin)
	for key, want := range map[string]any{"timeout": "1m", "limit": 10, "locale": nil, "apiKey": nil} {
		p, ok := s.Properties.Get(key)
		if !ok {
			t.Fatalf("no property %s", key)
		}
		if p.Default != want {
			t.Errorf("%s: default = %#v, want %#v", key, p.Default, want)
		}
	}
}

// A patch that sets only disabled or name leaves the row's config where it
// was written: its problems point into that file (not the patch, whose
// lines they are not), and `harness config` says where the config comes
// from. So do group rows, inserted rows and several patches in a row.
func TestConfigKeepsItsFileAcrossPatches(t *testing.T) {
	const base = `plugins:
  - id: a
    name: tool-test
    config:
      timeout: -1s
      locale: en
  - id: g
    group: true
    config:
      - id: b
        name: tool-test
        config: {timeout: -2s}
`
	const mustBePositive = ": invalid config: timeout: must be positive"
	for _, tc := range []struct {
		name    string
		patches []string
		id      string
		wantErr string // the whole error
		comment string // the row's line in `harness config`
	}{
		{"disabled only", []string{"- id: a\n  disabled: false\n"}, "a",
			`harness.yml:5:16: plugin "tool-test" (id a)` + mustBePositive,
			"# source: p1.yml; config from harness.yml"},
		{"name only", []string{"- id: a\n  name: tool-test\n"}, "a",
			`harness.yml:5:16: plugin "tool-test" (id a)` + mustBePositive,
			"# source: p1.yml; config from harness.yml"},
		{"name only, another plugin", []string{"- id: a\n  name: other\n"}, "a",
			`harness.yml:5:16: plugin "other" (id a)` + mustBePositive,
			"# source: p1.yml; config from harness.yml"},
		{"disabled, then a merge", []string{"- id: a\n  disabled: false\n", "- id: a\n  config: {locale: fr}\n"}, "a",
			`harness.yml:5:16: plugin "tool-test" (id a)` + mustBePositive,
			"# source: p2.yml; config keys timeout from harness.yml"},
		{"a merge, then disabled", []string{"- id: a\n  config: {locale: fr}\n", "- id: a\n  disabled: true\n"}, "a",
			`harness.yml:5:16: plugin "tool-test" (id a)` + mustBePositive,
			"# source: p2.yml; config keys timeout from harness.yml; config keys locale from p1.yml"},
		{"a merged key, then disabled", []string{"- id: a\n  config: {timeout: -3s}\n", "- id: a\n  disabled: false\n"}, "a",
			`p1.yml:2:21: plugin "tool-test" (id a)` + mustBePositive,
			"# source: p2.yml; config keys locale from harness.yml; config keys timeout from p1.yml"},
		{"reset, replaced, then disabled", []string{"- {id: a, config: ~}\n", "- {id: a, config: {timeout: -5s}}\n", "- {id: a, disabled: false}\n"}, "a",
			`p2.yml:1:29: plugin "tool-test" (id a)` + mustBePositive,
			"# source: p3.yml; config from p2.yml"},
		{"group child, disabled only", []string{"- id: b\n  disabled: false\n"}, "b",
			`harness.yml:12:27: plugin "tool-test" (id b)` + mustBePositive,
			"# source: p1.yml; config from harness.yml"},
		{"group disabled only", []string{"- id: g\n  disabled: false\n"}, "b",
			`harness.yml:12:27: plugin "tool-test" (id b)` + mustBePositive,
			"# source: harness.yml"},
		{"inserted row, then disabled only", []string{"- id: g\n  insert:\n    - id: c\n      name: tool-test\n      config: {timeout: -4s}\n", "- id: c\n  disabled: false\n"}, "c",
			`p1.yml:5:25: plugin "tool-test" (id c)` + mustBePositive,
			"# source: p2.yml; config from p1.yml"},
		{"inserted at the root, then renamed", []string{"- insert:\n    - id: c\n      name: x\n      config: {timeout: -4s}\n", "- id: c\n  name: tool-test\n"}, "c",
			`p1.yml:4:25: plugin "tool-test" (id c)` + mustBePositive,
			"# source: p2.yml; config from p1.yml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := compose(t, base, tc.patches...)
			var row *manifest.Entry
			for _, e := range m.Flatten() {
				if e.ID == tc.id {
					row = &e
				}
			}
			if row == nil {
				t.Fatalf("no row %s", tc.id)
			}
			if _, err := manifest.DecodeConfig(testPlugin, *row, nil); err == nil || err.Error() != tc.wantErr {
				t.Errorf("err = %v\nwant %s", err, tc.wantErr)
			}
			out, err := manifest.Dump(m, nil)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(out), "\n")
			i := slices.IndexFunc(lines, func(l string) bool { return strings.TrimSpace(l) == "- id: "+tc.id })
			if i < 1 || strings.TrimSpace(lines[i-1]) != tc.comment {
				t.Errorf("dump:\n%s\nwant the row %s after %q", out, tc.id, tc.comment)
			}
		})
	}
}

// A check of every row lists the problems in file order — harness.yml
// first, then each patch in the order applied, each file by line — not in
// row order.
func TestSortProblemsInFileOrder(t *testing.T) {
	m := compose(t, `plugins:
  - id: a
    name: tool-test
    config: {timeout: 1s}
  - id: b
    name: tool-test
    config: {timeout: -1s}
  - id: c
    name: tool-test
    config: {zzz: 1}
`, "- {id: a, config: {limit: lots}}\n", "- insert:\n  - {id: d, name: tool-test, config: {yyy: 1}}\n- {id: c, disabled: false}\n")
	var errs []error
	for _, id := range []string{"d", "a", "c", "b"} { // any order
		for _, e := range m.Flatten() {
			if e.ID == id {
				_, err := manifest.DecodeConfig(testPlugin, e, nil)
				errs = append(errs, err)
			}
		}
	}
	errs = append(errs, errors.New("no place"), fmt.Errorf("wrapped: %w", errors.Join(errors.New("x"), errors.New("y"))))
	var got []string
	for _, err := range m.SortProblems([]error{errors.Join(errs[:2]...), errs[2], errors.Join(errs[3:]...)}) {
		got = append(got, err.Error())
	}
	want := []string{
		`harness.yml:7:23: plugin "tool-test" (id b): invalid config: timeout: must be positive`,
		`harness.yml:10:14: plugin "tool-test" (id c): invalid config: unknown key "zzz" (allowed: apiKey, defaults, enabled, limit, locale, models, timeout)`,
		"p1.yml:1:27: plugin \"tool-test\" (id a): invalid config: limit: cannot unmarshal !!str `lots` into int",
		`p2.yml:2:39: plugin "tool-test" (id d): invalid config: unknown key "yyy" (allowed: apiKey, defaults, enabled, limit, locale, models, timeout)`,
		"no place",
		"wrapped: x\ny",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

type noConfig struct{}

// A key given to a plugin without config fields says so, instead of listing
// no allowed keys; so does a key under a nested mapping without fields.
func TestUnknownKeyOfEmptyConfig(t *testing.T) {
	type nested struct {
		Opts struct{} `yaml:"opts"`
	}
	for _, tc := range []struct {
		p    core.Plugin
		cfg  string
		want string
	}{
		{core.Define("bare", func(*core.Context, noConfig) error { return nil }), "{zzz: 1}",
			`harness.yml:4:14: plugin "bare" (id bare): invalid config: unknown key "zzz" (this plugin takes no config)`},
		{core.Define("bare", func(*core.Context, nested) error { return nil }), "{opts: {zzz: 1}}",
			`harness.yml:4:21: plugin "bare" (id bare): invalid config: opts: unknown key "zzz" (opts takes no keys)`},
	} {
		m, err := manifest.Parse("harness.yml", []byte("plugins:\n  - id: bare\n    name: bare\n    config: "+tc.cfg+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := manifest.DecodeConfig(tc.p, m.Plugins[0], nil); err == nil || err.Error() != tc.want {
			t.Errorf("err = %v\nwant %s", err, tc.want)
		}
	}
}

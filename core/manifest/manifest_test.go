package manifest_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/manifest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// B19: every malformed manifest is an error naming the file and line.
func TestParseRejectsMalformedManifests(t *testing.T) {
	for _, empty := range []string{"plugins: []\n", "plugins: ~\n", "plugins: null\n", "plugins: !!null\n"} {
		if m, err := manifest.Parse("harness.yml", []byte(empty)); err != nil || len(m.Plugins) != 0 {
			t.Fatalf("%q = %v, %v; want an empty tree on purpose", empty, m, err)
		}
	}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"c1 duplicate key", "plugins:\n  - id: shell\n    name: a\nmodel: deepseek-chat\nplugins:\n  - id: spill\n", "harness.yml:5:1: key plugins already defined at line 1"},
		{"c4 tab indentation", "plugins:\n\t- id: shell\n", "harness.yml:2:1: tab character used for indentation"},
		{"c5 flow then block (mapping)", "plugins: []\n- id: shell\n", "manifest must contain exactly one YAML document"},
		{"c5 flow then block (list)", "[]\n- id: shell\n", "harness.yml:1: manifest must contain exactly one YAML document"},
		{"l4 bad indentation names the offending line", "plugins:\n  - id: a\n    name: tool-bash\n   config: {x: 1}\n", "harness.yml:4: did not find expected '-' indicator"},
		{"l4 bad indentation deep in a long block", "plugins:\n  - id: a\n    name: tool-bash\n    config:\n      x: 1\n      y: 2\n  - id: b\n    name: tool-read\n   config: {x: 1}\n", "harness.yml:9: did not find expected '-' indicator"},
		{"l4 unknown alias names its line", "plugins:\n  - id: a\n    name: x\n    config:\n      k: v\n      j: *b\n", "harness.yml:6: unknown anchor 'b' referenced"},
		{"c6 two documents", "plugins: []\n---\nplugins: []\n", "harness.yml:2: manifest must contain exactly one YAML document"},
		{"unknown top-level key", "plugins: []\nmodel: x\n", "harness.yml:2:1: unknown key \"model\""},
		{"unknown row key", "plugins:\n  - name: a\n    confg: {}\n", "harness.yml:3:5: unknown row key \"confg\""},
		{"unknown tag", "plugins:\n  - name: a\n    config: {x: !secret y}\n", "harness.yml:3:17: unknown tag !secret"},
		{"env outside config", "plugins:\n  - name: !env NAME\n", "harness.yml:2:11: !env is only allowed inside a plugin's config"},
		{"duplicate id", "plugins:\n  - {id: a, name: x}\n  - {id: a, name: y}\n", "harness.yml:3:5: duplicate id \"a\" (first used at harness.yml:2:5)"},
		{"same name twice without ids", "plugins:\n  - name: x\n  - name: x\n", "harness.yml:2:5: plugin \"x\" is used by several rows: give each an id"},
		{"row without name", "plugins:\n  - id: a\n", "harness.yml:2:5: row has no name"},
		{"plugins not a list", "plugins: {a: 1}\n", "harness.yml:1:10: plugins must be a list of rows"},
		{"alias", "plugins:\n  - &a {name: x}\n  - *a\n", "harness.yml:3:5: YAML aliases are not supported"},
		{"bad timeout", "startTimeout: soon\n", "harness.yml:1:15: startTimeout: want a duration"},
		{"empty file", "", "harness.yml: empty manifest: no `plugins:` list (write `plugins: []` to boot no plugins)"},
		{"comments only", "# nothing yet\n", "harness.yml: empty manifest: no `plugins:` list"},
		{"plugins without rows", "plugins:\n# to do\n", "harness.yml:1:1: plugins: has no rows (write `plugins: []` to boot no plugins)"},
		{"no plugins key", "startTimeout: 5s\n", "harness.yml:1:1: no `plugins:` list (write `plugins: []` to boot no plugins)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := manifest.Parse("harness.yml", []byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant containing %q", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "harness.yml:") {
				t.Fatalf("error does not name the file: %v", err)
			}
		})
	}
}

func TestParseAcceptsNullsAndDefaultsIDs(t *testing.T) {
	m, err := manifest.Parse("h.yml", []byte("plugins: ~\n"))
	if err != nil || len(m.Plugins) != 0 {
		t.Fatalf("c2: %v %v", m, err)
	}
	m, err = manifest.Parse("h.yml", []byte("startTimeout: 2s\nplugins:\n  - name: spill\n    config: ~\n  - {id: b, name: bash, disabled: yes}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.StartTimeout != 2*time.Second || m.Plugins[0].ID != "spill" || m.Plugins[0].Config != nil || !m.Plugins[1].Disabled {
		t.Fatalf("got %+v", m)
	}
	if e := m.Plugins[1]; e.Pos.String() != "h.yml:5:5" {
		t.Fatalf("pos = %s", e.Pos)
	}
}

type testConfig struct {
	Timeout  time.Duration `yaml:"timeout"`
	Locale   string        `yaml:"locale"`
	Enabled  bool          `yaml:"enabled"`
	APIKey   string        `yaml:"apiKey" harness:"secret"`
	Limit    int           `yaml:"limit"`
	Models   []testModel   `yaml:"models"`
	Defaults map[string]string
}

type testModel struct {
	Name   string `yaml:"name"`
	Window int    `yaml:"window"`
}

func (c *testConfig) SetDefaults() { c.Timeout = time.Minute; c.Limit = 10 }

func (c testConfig) Validate() error {
	for i, m := range c.Models {
		if m.Window < 0 {
			return &core.ConfigError{Issues: []core.Issue{{Path: "models[" + string(rune('0'+i)) + "].window", Message: "must not be negative"}}}
		}
	}
	if c.Timeout <= 0 {
		return &core.ConfigError{Issues: []core.Issue{{Path: "timeout", Message: "must be positive"}}}
	}
	return nil
}

var testPlugin = core.Define("tool-test", func(*core.Context, testConfig) error { return nil })

func decode(t *testing.T, yml string, env map[string]string) (*testConfig, error) {
	t.Helper()
	m, err := manifest.Parse("harness.yml", []byte(yml))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := manifest.DecodeConfig(testPlugin, m.Plugins[0], func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		return nil, err
	}
	return cfg.(*testConfig), nil
}

func TestDecodeConfig(t *testing.T) {
	// c3: a null config gets the defaults, non-nil.
	c, err := decode(t, "plugins:\n  - name: tool-test\n    config: ~\n", nil)
	if err != nil || c.Timeout != time.Minute || c.Limit != 10 {
		t.Fatalf("c3: %+v %v", c, err)
	}
	// c7: yaml.v3 typing, documented: `no` stays a string, `yes` is true.
	c, err = decode(t, "plugins:\n  - name: tool-test\n    config: {locale: no, enabled: yes, timeout: 2m}\n", nil)
	if err != nil || c.Locale != "no" || !c.Enabled || c.Timeout != 2*time.Minute || c.Limit != 10 {
		t.Fatalf("c7: %+v %v", c, err)
	}
	// !env set, default, number.
	c, err = decode(t, "plugins:\n  - name: tool-test\n    config:\n      apiKey: !env KEY\n      locale: !env [LOCALE, en]\n      limit: !env LIMIT\n      models: [{name: m, window: 5}]\n", map[string]string{"KEY": "sk-1", "LIMIT": "42"})
	if err != nil || c.APIKey != "sk-1" || c.Locale != "en" || c.Limit != 42 || c.Models[0].Window != 5 {
		t.Fatalf("env: %+v %v", c, err)
	}
	// A float with an integral value is an integer; an !env number too.
	c, err = decode(t, "plugins:\n  - name: tool-test\n    config: {limit: 1e3, models: [{name: m, window: !env W}]}\n", map[string]string{"W": "7.0"})
	if err != nil || c.Limit != 1000 || c.Models[0].Window != 7 {
		t.Fatalf("integral floats: %+v %v", c, err)
	}
	if _, err := decode(t, "plugins:\n  - name: tool-test\n    config: {limit: !env L}\n", map[string]string{"L": "0.5"}); err == nil || !strings.Contains(err.Error(), "limit: want an integer, got 0.5") {
		t.Fatalf("!env fraction: %v", err)
	}
	// ${...} stays literal.
	c, err = decode(t, "plugins:\n  - name: tool-test\n    config: {locale: '${HOME}'}\n", nil)
	if err != nil || c.Locale != "${HOME}" {
		t.Fatalf("literal: %+v %v", c, err)
	}
}

func TestDecodeConfigErrorsNamePlaceAndField(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"env unset", "plugins:\n  - name: tool-test\n    config:\n      apiKey: !env DEEPSEEK_API_KEY\n",
			`harness.yml:4:15: plugin "tool-test" (id tool-test): environment variable DEEPSEEK_API_KEY is not set`},
		{"unknown key", "plugins:\n  - name: tool-test\n    config:\n      timout: 2m\n",
			`harness.yml:4:7: plugin "tool-test" (id tool-test): invalid config: unknown key "timout" (allowed: apiKey, defaults, enabled, limit, locale, models, timeout)`},
		{"nested unknown key", "plugins:\n  - name: tool-test\n    config:\n      models:\n        - {name: a, size: 3}\n",
			`harness.yml:5:21: plugin "tool-test" (id tool-test): invalid config: models[0]: unknown key "size" (allowed: name, window)`},
		{"wrong type", "plugins:\n  - name: tool-test\n    config:\n      limit: lots\n",
			"harness.yml:4:14: plugin \"tool-test\" (id tool-test): invalid config: limit: cannot unmarshal !!str `lots` into int"},
		{"wrong type nested", "plugins:\n  - name: tool-test\n    config:\n      models:\n        - {name: a}\n        - {name: b, window: wide}\n",
			"harness.yml:6:29: plugin \"tool-test\" (id tool-test): invalid config: models[1].window: cannot unmarshal !!str `wide` into int"},
		{"bad duration", "plugins:\n  - name: tool-test\n    config:\n      locale: en\n      timeout: soon\n",
			`harness.yml:5:16: plugin "tool-test" (id tool-test): invalid config: timeout: `},
		{"fraction into an int", "plugins:\n  - name: tool-test\n    config:\n      limit: 1.5\n",
			`harness.yml:4:14: plugin "tool-test" (id tool-test): invalid config: limit: want an integer, got 1.5`},
		{"nested fraction into an int", "plugins:\n  - name: tool-test\n    config:\n      models:\n        - {name: a, window: 2.5}\n",
			`harness.yml:5:29: plugin "tool-test" (id tool-test): invalid config: models[0].window: want an integer, got 2.5`},
		{"validate", "plugins:\n  - name: tool-test\n    config:\n      timeout: -1s\n",
			`harness.yml:4:16: plugin "tool-test" (id tool-test): invalid config: timeout: must be positive`},
		{"validate nested path", "plugins:\n  - name: tool-test\n    config:\n      models:\n        - {name: a, window: -2}\n",
			`harness.yml:5:29: plugin "tool-test" (id tool-test): invalid config: models[0].window: must not be negative`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decode(t, tc.in, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant containing %q", err, tc.want)
			}
			var me *manifest.Error
			if !errors.As(err, &me) {
				t.Fatalf("not a *manifest.Error: %T", err)
			}
		})
	}
}

func TestComposeAppliesPatchesOnCopies(t *testing.T) {
	base, err := manifest.Parse("harness.yml", []byte(`plugins:
  - {id: tools, name: tools, config: {mode: a}}
  - {id: web, name: tool-web}
  - id: g
    group: true
    config:
      - {id: grep, name: tool-search}
`))
	if err != nil {
		t.Fatal(err)
	}
	patch, err := manifest.ParsePatch("p.yml", []byte(`- {id: tools, config: {mode: b}}
- {id: web, disabled: true}
- insert:
    - {id: meter, name: tokenmeter}
- {id: meter, config: {budget: 1}}
- id: g
  insert:
    - {id: glob, name: tool-glob}
`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Compose(base, patch)
	if err != nil {
		t.Fatal(err)
	}
	if m.Plugins[0].Config.Content[1].Value != "b" || m.Plugins[0].Source != "p.yml" {
		t.Fatalf("override: %+v", m.Plugins[0])
	}
	if base.Plugins[0].Config.Content[1].Value != "a" {
		t.Fatal("base mutated")
	}
	if !m.Plugins[1].Disabled || m.Plugins[3].ID != "meter" || m.Plugins[3].Config == nil {
		t.Fatalf("got %+v", m.Plugins)
	}
	flat := m.Flatten()
	if len(flat) != 5 || flat[3].ID != "glob" {
		t.Fatalf("flatten: %+v", flat)
	}
	for _, bad := range []struct{ in, want string }{
		{"- {id: nope, disabled: true}\n", `p.yml:1:3: patch: no row with id "nope"`},
		{"- {id: web, insert: [{name: x}]}\n", `p.yml:1:3: patch insert: row "web" is not a group`},
		{"- {disabled: true}\n", "p.yml:1:3: a patch row needs an id"},
		{"[]\n- id: shell\n", "p.yml:1: manifest must contain exactly one YAML document"},
		{"- id: web\n  name: [x]\n", "p.yml:2:9: name must be a non-empty string"},
		{"- id: web\n  name: ~\n", "p.yml:2:9: name must be a non-empty string"},
		{"- id: [web]\n  disabled: true\n", "p.yml:1:7: id must be a non-empty string"},
	} {
		p, err := manifest.ParsePatch("p.yml", []byte(bad.in))
		if err == nil {
			_, err = manifest.Compose(base, p)
		}
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("patch %q: err = %v, want %q", bad.in, err, bad.want)
		}
	}
}

func TestDumpRedactsSecretsAndNamesSources(t *testing.T) {
	m, err := manifest.Parse("harness.yml", []byte("plugins:\n  - id: a\n    name: tool-test\n    config: {apiKey: sk-live-123, locale: en}\n  - id: b\n    name: tool-test\n    config: {apiKey: !env KEY}\n  - id: c\n    name: tool-test\n    config: {apiKey: !env [NOPE, sk-default-9]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	cat, _ := core.NewCatalog(testPlugin)
	out, err := manifest.Dump(m, cat)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	if strings.Contains(s, "sk-live-123") || strings.Contains(s, "sk-default-9") || !strings.Contains(s, "apiKey: <redacted>") || !strings.Contains(s, "apiKey: !env KEY") || !strings.Contains(s, "# source: harness.yml") {
		t.Fatalf("dump:\n%s", s)
	}
	if _, err := manifest.Parse("dump.yml", out); err != nil {
		t.Fatalf("dump does not parse back: %v\n%s", err, s)
	}
}

func TestSchemaMarksSecretsWriteOnly(t *testing.T) {
	s := manifest.ConfigSchema(testPlugin)
	p, ok := s.Properties.Get("apiKey")
	if !ok || !p.WriteOnly {
		t.Fatalf("apiKey schema = %+v", p)
	}
	if d, _ := s.Properties.Get("timeout"); d == nil || d.Type != "string" {
		t.Fatalf("timeout schema = %+v", d)
	}
	if len(s.Required) != 0 {
		t.Fatalf("required = %v", s.Required)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"plugins:\n  - name: a\n", "plugins: []\n---\n", "[]\n- a", "plugins:\n\t- x", "plugins: ~", "a: &x 1\nb: *x\n", "plugins:\n  - {id: a, name: b, config: !env [X, y]}\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := manifest.Parse("f.yml", data)
		if err == nil {
			_, _ = manifest.Dump(m, nil)
			_ = m.Flatten()
		}
		_, _ = manifest.ParsePatch("f.yml", data)
	})
}

// B19 (kind: tabs and bytes yaml.v3 reports without a line): tabs inside
// block scalars, quoted strings and flow collections are content, not
// indentation; tab indentation, invalid UTF-8 and control characters are
// errors naming FILE:LINE:COL.
func TestParseTabsAndBytes(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"tab in literal block", "plugins:\n  - name: a\n    config:\n      text: |\n        one\n        \tindented\n", ""},
		{"tab in quoted string", "plugins:\n  - name: a\n    config:\n      text: \"one\n        \ttwo\"\n", ""},
		{"tab in flow list", "plugins:\n  - name: a\n    config:\n      list: [x,\n\ty]\n", ""},
		{"tab indentation after a tab in a block", "plugins:\n  - name: a\n    config:\n      text: |\n        one\n        \tok\n  - name: b\n    config:\n\tx: 1\n", "harness.yml:9:1: tab character used for indentation"},
		{"tab before comment", "plugins: ~\n\t# comment\n", "harness.yml:2:1: tab character used for indentation"},
		{"NUL byte", "plugins: ~\n# x\x00\n", "harness.yml:2:4: control character U+0000 is not allowed"},
		{"invalid UTF-8", "plugins:\n  - id: \xff\xfe\n    name: a\n", "harness.yml:2:9: invalid UTF-8"},
		{"C1 control", "plugins:\n  - name: \u0090a\n", "harness.yml:2:11: control character U+0090 is not allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := manifest.Parse("harness.yml", []byte(tc.in))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("valid YAML rejected: %v", err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant prefix %q", err, tc.want)
			}
		})
	}
	if _, err := manifest.ParsePatch("p.yml", []byte("- id: a\n  config: {x: \"\x01\"}\n")); err == nil || !strings.HasPrefix(err.Error(), "p.yml:2:16: control character U+0001") {
		t.Fatalf("patch: %v", err)
	}
}

// Secrets never printed (kind: credentials in user-keyed maps, such as extra
// HTTP headers or environment variables, which no field tag can mark).
func TestDumpRedactsCredentialMapEntries(t *testing.T) {
	type cfg struct {
		Headers map[string]string `yaml:"headers"`
		Env     map[string]string `yaml:"env"`
	}
	p := core.Define("maps", func(*core.Context, cfg) error { return nil })
	m, err := manifest.Parse("harness.yml", []byte("plugins:\n  - id: a\n    name: maps\n    config:\n      headers: {Authorization: Bearer sk-hdr-1, X-Api-Key: k-2, Accept: text/plain}\n      env: {GITHUB_TOKEN: ghp_3, FROM_ENV_KEY: !env SOME_KEY, LANG: C, DEFAULT_TOKEN: !env [NOPE, dflt-4]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	cat, _ := core.NewCatalog(p)
	out, err := manifest.Dump(m, cat)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, leak := range []string{"sk-hdr-1", "k-2", "ghp_3", "dflt-4"} {
		if strings.Contains(s, leak) {
			t.Fatalf("dump prints %q:\n%s", leak, s)
		}
	}
	for _, keep := range []string{"Accept: text/plain", "LANG: C", "FROM_ENV_KEY: !env SOME_KEY", "Authorization: <redacted>"} {
		if !strings.Contains(s, keep) {
			t.Fatalf("dump lacks %q:\n%s", keep, s)
		}
	}
}

// A row whose plugin name comes from a patch is placed at that patch row, so
// an unknown name is reported where it was written.
func TestPatchedNameTakesThePatchPosition(t *testing.T) {
	base, err := manifest.Parse("harness.yml", []byte("plugins:\n  - {id: a, name: x}\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := manifest.ParsePatch("p.yml", []byte("- id: a\n  name: y\n"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Compose(base, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Plugins[0].Pos.String(); got != "p.yml:1:3" {
		t.Fatalf("pos = %s", got)
	}
}

// Huge inputs: a device or an oversized file is an error naming the file,
// never an unbounded read.
func TestReadFileRefusesDevicesAndHugeFiles(t *testing.T) {
	for _, path := range []string{"/dev/zero", "/dev/urandom"} {
		if _, err := manifest.ReadFile(path); err == nil || err.Error() != path+": not a regular file" {
			t.Errorf("ReadFile(%s) = %v", path, err)
		}
		if _, err := manifest.ReadPatchFile(path); err == nil || err.Error() != path+": not a regular file" {
			t.Errorf("ReadPatchFile(%s) = %v", path, err)
		}
	}
	big := filepath.Join(t.TempDir(), "big.yml")
	data := []byte("plugins: ~\n# " + strings.Repeat("x", manifest.MaxFileBytes) + "\n")
	if err := os.WriteFile(big, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := manifest.ReadFile(big); err == nil || err.Error() != big+": file is larger than 8 MiB" {
		t.Errorf("ReadFile(big) = %v", err)
	}
	ok := filepath.Join(t.TempDir(), "ok.yml")
	if err := os.WriteFile(ok, []byte("plugins: ~\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := manifest.ReadFile(ok); err != nil {
		t.Errorf("ReadFile(ok) = %v", err)
	}
}

type plainConfig struct {
	Name   string      `yaml:"name"`
	Limit  int         `yaml:"limit"`
	Models []testModel `yaml:"models"`
}

// Validate returns plain errors that start with the field path, as most
// plugins' Validate methods do.
func (c plainConfig) Validate() error {
	if c.Limit > 5 {
		return fmt.Errorf("limit: must be at most 5, got %d", c.Limit)
	}
	for i, m := range c.Models {
		if m.Window < 0 {
			return fmt.Errorf("models[%d].window: must not be negative", i)
		}
	}
	if c.Name == "y" {
		return errors.New("limit must not be set with name y")
	}
	if c.Name == "z" {
		return errors.New("must not be z")
	}
	if c.Name == "x" {
		return errors.New("name, limit: do not go together")
	}
	return nil
}

var plainPlugin = core.Define("plain-test", func(*core.Context, plainConfig) error { return nil })

// A plain Validate error naming a field is reported at that field's line,
// not at the start of the config mapping.
func TestPlainValidateErrorsPointAtTheField(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plugins:\n  - name: plain-test\n    config:\n      name: a\n      limit: 9\n",
			`harness.yml:5:14: plugin "plain-test" (id plain-test): invalid config: limit: must be at most 5, got 9`},
		{"plugins:\n  - name: plain-test\n    config:\n      name: a\n      models:\n        - {name: m, window: 1}\n        - {name: n, window: -1}\n",
			`harness.yml:7:29: plugin "plain-test" (id plain-test): invalid config: models[1].window: must not be negative`},
		{"plugins:\n  - name: plain-test\n    config:\n      limit: 1\n      name: x\n",
			`harness.yml:4:7: plugin "plain-test" (id plain-test): invalid config: name, limit: do not go together`},
		{"plugins:\n  - name: plain-test\n    config:\n      name: y\n      limit: 1\n",
			`harness.yml:5:14: plugin "plain-test" (id plain-test): invalid config: limit must not be set with name y`},
		{"plugins:\n  - name: plain-test\n    config:\n      limit: 1\n      name: z\n",
			`harness.yml:4:7: plugin "plain-test" (id plain-test): invalid config: must not be z`},
	} {
		m, err := manifest.Parse("harness.yml", []byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		_, err = manifest.DecodeConfig(plainPlugin, m.Plugins[0], nil)
		if err == nil || err.Error() != tc.want {
			t.Errorf("err = %v\nwant %s", err, tc.want)
		}
	}
}

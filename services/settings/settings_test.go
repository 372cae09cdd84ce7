package settings_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshgo/harness"
	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/services/settings"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// greetCfg is the test plugins' config: a plain field, a checked field and
// a secret.
type greetCfg struct {
	Greeting string `yaml:"greeting" json:"greeting,omitempty"`
	Tone     string `yaml:"tone" json:"tone,omitempty"`
	Token    string `yaml:"token" json:"token,omitempty" harness:"secret"`
}

func (c *greetCfg) SetDefaults() { c.Greeting = "hello"; c.Tone = "plain" }

func (c greetCfg) Validate() error {
	if c.Tone != "plain" && c.Tone != "loud" {
		return &core.ConfigError{Issues: []core.Issue{{Path: "tone", Message: "must be plain or loud"}}}
	}
	return nil
}

var (
	greetKey  = core.NewKey[greetCfg]("settings-test-greet")
	pinnedKey = core.NewKey[greetCfg]("settings-test-pinned")
	greet     = core.Define("greet", func(c *core.Context, cfg greetCfg) error { return core.Provide(c, greetKey, cfg) })
	// pinned stands for a plugin the page runs on (RestartOnly).
	pinned = core.Define("pinned", func(c *core.Context, cfg greetCfg) error { return core.Provide(c, pinnedKey, cfg) })
)

// harnessYML is the manifest: greet's greeting and tone come from it.
const harnessYML = `plugins:
  - name: greet
    config: {greeting: from-yml, tone: loud}
  - name: pinned
    config: {greeting: pinned-yml}
`

type fixture struct {
	h    *fxcore.Harness
	file string
	svc  *settings.Service
}

// start writes the settings file saved (if any), boots harnessYML with it
// as a patch layer (as `harness serve` does) and returns the service over
// the running harness, with Options.Base when withBase.
func start(t *testing.T, saved string, withBase bool) *fixture {
	t.Helper()
	file := filepath.Join(t.TempDir(), "harness", "settings.yml")
	var opts []harness.Option
	if saved != "" {
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(saved), 0o600); err != nil {
			t.Fatal(err)
		}
		opts = append(opts, harness.WithPatchFiles(file))
	}
	h := harnesstest.Start(t, harnessYML, append(opts, harness.WithPlugins(greet, pinned))...)
	o := settings.Options{File: file, Catalog: h.Catalog, RestartOnly: []string{"pinned"}}
	if withBase {
		o.Base = func() (*manifest.Manifest, error) { return manifest.Parse("harness.yml", []byte(harnessYML)) }
	}
	return &fixture{h: h, file: file, svc: settings.New(h.Loader, o)}
}

func (f *fixture) running(t *testing.T, k core.Key[greetCfg]) greetCfg {
	t.Helper()
	return harnesstest.Service(t, f.h, k)
}

func (f *fixture) get(t *testing.T) settings.Snapshot {
	t.Helper()
	s, err := f.svc.Get()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func rowOf(t *testing.T, s settings.Snapshot, id string) settings.Row {
	t.Helper()
	for _, r := range s.Rows {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no row %q in %+v", id, s.Rows)
	return settings.Row{}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLayering: the saved values override harness.yml key by key, the
// other keys keep harness.yml's values, and a change recomposed over Base
// keeps both layers.
func TestLayering(t *testing.T) {
	f := start(t, "- id: greet\n  config: {greeting: from-settings}\n", true)
	r := rowOf(t, f.get(t), "greet")
	if r.Values["greeting"] != "from-settings" || r.Values["tone"] != "loud" || !slices.Equal(r.Saved, []string{"greeting"}) {
		t.Fatalf("layered row: values %v saved %v", r.Values, r.Saved)
	}
	if p := rowOf(t, f.get(t), "pinned"); p.Values["greeting"] != "pinned-yml" || p.Values["tone"] != "plain" || len(p.Saved) != 0 || !p.RestartOnly {
		t.Fatalf("unsaved row: %+v", p)
	}
	if r.Schema == nil || r.Plugin != "greet" || r.RestartOnly {
		t.Fatalf("row metadata: %+v", r)
	}
	res, err := f.svc.Update(context.Background(), "greet", f.get(t).Revision, map[string]any{"tone": "plain"})
	if err != nil || !res.Applied {
		t.Fatalf("update: %+v %v", res, err)
	}
	if got := f.running(t, greetKey); got.Greeting != "from-settings" || got.Tone != "plain" {
		t.Fatalf("running after update: %+v", got)
	}
	if res.Row.Values["greeting"] != "from-settings" || !slices.Equal(res.Row.Saved, []string{"greeting", "tone"}) {
		t.Fatalf("updated row: %+v", res.Row)
	}
}

// TestBadValueRejectedByFieldPath: a value Validate refuses is reported at
// its field path; nothing is saved, the revision stands and the running
// config is unchanged. An unknown row is ErrNotFound.
func TestBadValueRejectedByFieldPath(t *testing.T) {
	const saved = "- id: greet\n  config: {greeting: kept}\n"
	f := start(t, saved, true)
	snap := f.get(t)
	_, err := f.svc.Update(context.Background(), "greet", snap.Revision, map[string]any{"tone": "shouty", "greeting": "new"})
	var fe *settings.FieldErrors
	if !errors.As(err, &fe) || !strings.Contains(fe.Fields["tone"], "must be plain or loud") {
		t.Fatalf("bad value: %v (%+v)", err, fe)
	}
	if got := readFile(t, f.file); got != saved {
		t.Fatalf("a refused change was saved:\n%s", got)
	}
	if rev := f.get(t).Revision; rev != snap.Revision {
		t.Fatalf("revision moved %q → %q", snap.Revision, rev)
	}
	if got := f.running(t, greetKey); got.Greeting != "kept" || got.Tone != "loud" {
		t.Fatalf("running after a refused change: %+v", got)
	}
	// An unknown key is a decode error at that key.
	_, err = f.svc.Update(context.Background(), "greet", snap.Revision, map[string]any{"volume": 11})
	if !errors.As(err, &fe) || !strings.HasPrefix(fe.Fields["volume"], `unknown key "volume"`) {
		t.Fatalf("unknown key: %v (%+v)", err, fe)
	}
	if _, err := f.svc.Update(context.Background(), "nope", snap.Revision, map[string]any{"tone": "loud"}); !errors.Is(err, settings.ErrNotFound) {
		t.Fatalf("unknown row: %v", err)
	}
}

// TestSecretsWriteOnly: a secret is applied and saved privately but never
// returned (only whether it is set), and survives changes to other keys.
func TestSecretsWriteOnly(t *testing.T) {
	f := start(t, "", true)
	ctx := context.Background()
	snap := f.get(t)
	if r := rowOf(t, snap, "greet"); r.Secrets["token"] || len(r.Secrets) != 1 {
		t.Fatalf("secrets before: %v", r.Secrets)
	}
	if snap.Revision != "0" {
		t.Fatalf("revision without a file: %q", snap.Revision)
	}
	res, err := f.svc.Update(ctx, "greet", snap.Revision, map[string]any{"token": "sk-very-secret"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Row.Values["token"]; ok || !res.Row.Secrets["token"] {
		t.Fatalf("update answer: values %v secrets %v", res.Row.Values, res.Row.Secrets)
	}
	res, err = f.svc.Update(ctx, "greet", res.Revision, map[string]any{"greeting": "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.running(t, greetKey); got.Token != "sk-very-secret" || got.Greeting != "hi" {
		t.Fatalf("running: %+v", got)
	}
	snap = f.get(t)
	b, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("sk-very-secret")) || !rowOf(t, snap, "greet").Secrets["token"] {
		t.Fatalf("Get leaks or loses the secret: %s", b)
	}
	if raw := readFile(t, f.file); !strings.Contains(raw, "token: sk-very-secret") || !strings.Contains(raw, "greeting: hi") {
		t.Fatalf("settings file:\n%s", raw)
	}
	st, err := os.Stat(f.file)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.Stat(filepath.Dir(f.file))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 || dir.Mode().Perm() != 0o700 {
		t.Fatalf("settings file %v in %v", st.Mode(), dir.Mode())
	}
}

// TestStaleRevisionRefused: a change naming a revision other than the
// file's is ErrConflict and changes nothing.
func TestStaleRevisionRefused(t *testing.T) {
	f := start(t, "", true)
	ctx := context.Background()
	old := f.get(t).Revision
	res, err := f.svc.Update(ctx, "greet", old, map[string]any{"greeting": "first"})
	if err != nil || res.Revision == old {
		t.Fatalf("first: %+v %v", res, err)
	}
	before := readFile(t, f.file)
	_, err = f.svc.Update(ctx, "greet", old, map[string]any{"greeting": "second"})
	if !errors.Is(err, settings.ErrConflict) {
		t.Fatalf("stale revision: %v", err)
	}
	if got := readFile(t, f.file); got != before {
		t.Fatalf("a stale change was saved:\n%s", got)
	}
	if got := f.running(t, greetKey); got.Greeting != "first" {
		t.Fatalf("running after a stale change: %+v", got)
	}
	if rev := f.get(t).Revision; rev != res.Revision {
		t.Fatalf("revision %q, want %q", rev, res.Revision)
	}
}

// TestRestartOnlyRowIsSavedNotApplied: a RestartOnly plugin's change is
// validated and saved, reported not applied, and the running config stays.
func TestRestartOnlyRowIsSavedNotApplied(t *testing.T) {
	f := start(t, "", true)
	ctx := context.Background()
	snap := f.get(t)
	if _, err := f.svc.Update(ctx, "pinned", snap.Revision, map[string]any{"tone": "shouty"}); err == nil {
		t.Fatal("a bad value for a restart-only row was accepted")
	}
	res, err := f.svc.Update(ctx, "pinned", snap.Revision, map[string]any{"greeting": "later"})
	if err != nil || res.Applied || !res.Row.RestartOnly {
		t.Fatalf("restart-only update: %+v %v", res, err)
	}
	if got := f.running(t, pinnedKey); got.Greeting != "pinned-yml" {
		t.Fatalf("a restart-only change was applied: %+v", got)
	}
	if raw := readFile(t, f.file); !strings.Contains(raw, "greeting: later") {
		t.Fatalf("not saved:\n%s", raw)
	}
	// The next start composes it.
	restarted := harnesstest.Start(t, harnessYML, harness.WithPlugins(greet, pinned), harness.WithPatchFiles(f.file))
	if got := harnesstest.Service(t, restarted, pinnedKey); got.Greeting != "later" {
		t.Fatalf("after a restart: %+v", got)
	}
}

// TestNullRevertsToManifestValue: with Options.Base, null removes the key
// from the settings file and the running value falls back to harness.yml's
// at once; without Base, to the plugin's default until a restart.
func TestNullRevertsToManifestValue(t *testing.T) {
	ctx := context.Background()
	f := start(t, "- id: greet\n  config: {greeting: from-settings, tone: plain}\n", true)
	res, err := f.svc.Update(ctx, "greet", f.get(t).Revision, map[string]any{"greeting": nil})
	if err != nil || !res.Applied || res.Row.Values["greeting"] != "from-yml" {
		t.Fatalf("null with Base: %+v %v", res, err)
	}
	if got := f.running(t, greetKey); got.Greeting != "from-yml" || got.Tone != "plain" {
		t.Fatalf("running after null: %+v", got)
	}
	if raw := readFile(t, f.file); strings.Contains(raw, "greeting") || !strings.Contains(raw, "tone: plain") {
		t.Fatalf("settings file after null:\n%s", raw)
	}
	if r := rowOf(t, f.get(t), "greet"); r.Values["greeting"] != "from-yml" || !slices.Equal(r.Saved, []string{"tone"}) {
		t.Fatalf("Get after null: %+v", r)
	}

	// Without Base the running row loses the key: the default applies.
	g := start(t, "- id: greet\n  config: {greeting: from-settings}\n", false)
	res, err = g.svc.Update(ctx, "greet", g.get(t).Revision, map[string]any{"greeting": nil})
	if err != nil || res.Row.Values["greeting"] != "hello" {
		t.Fatalf("null without Base: %+v %v", res, err)
	}
	if got := g.running(t, greetKey); got.Greeting != "hello" || got.Tone != "loud" {
		t.Fatalf("running after null without Base: %+v", got)
	}
}

package web_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness"
	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/fxcore"
	"github.com/dshgo/harness/core/manifest"
	"github.com/dshgo/harness/harnesstest"
	"github.com/dshgo/harness/services/settings"
	"github.com/dshgo/harness/services/tools"
)

// TestSettingsValidateFenceApplyAndHideSecrets: the settings service
// validates a change with the manifest's decoder (errors by field path),
// fences stale revisions, applies a good change to the running tree at
// once, saves it privately, and never returns a secret.
func TestSettingsValidateFenceApplyAndHideSecrets(t *testing.T) {
	t.Parallel()
	e := start(t, nil, "default")
	file := filepath.Join(t.TempDir(), "harness", "settings.yml")
	svc := settings.New(e.h.Loader, settings.Options{File: file, Catalog: e.h.Catalog})
	ctx := context.Background()

	snap, err := svc.Get()
	if err != nil {
		t.Fatal(err)
	}
	llm := rowOf(t, snap, "test")
	if _, ok := llm.Values["apiKey"]; ok || !llm.Secrets["apiKey"] {
		t.Fatalf("llm row values %v secrets %v", llm.Values, llm.Secrets)
	}
	if a := rowOf(t, snap, "approval"); a.Values["answerer"] != "headless" || a.Schema == nil {
		t.Fatalf("approval row %+v", a)
	}

	_, err = svc.Update(ctx, "approval", snap.Revision, map[string]any{"answerer": "tty"})
	var fe *settings.FieldErrors
	if !errors.As(err, &fe) || !strings.Contains(fe.Fields["answerer"], `"tty" is not one of auto, terminal, headless`) {
		t.Fatalf("bad value: %v (%+v)", err, fe)
	}
	if _, err := os.Stat(file); err == nil {
		t.Fatal("a refused change was saved")
	}

	res, err := svc.Update(ctx, "approval", snap.Revision, map[string]any{"policy": "never"})
	if err != nil || !res.Applied {
		t.Fatalf("good change: %+v %v", res, err)
	}
	approver, _ := core.Lookup(e.h.Root.Context(), tools.ApprovalKey)
	if u := approver.(interface{ Unanswerable() string }).Unanswerable(); !strings.Contains(u, "never") {
		t.Fatalf("the running approval service did not reload: %q", u)
	}
	if _, err := svc.Update(ctx, "approval", snap.Revision, map[string]any{"policy": "ask"}); !errors.Is(err, settings.ErrConflict) {
		t.Fatalf("stale revision: %v", err)
	}

	res, err = svc.Update(ctx, "test", res.Revision, map[string]any{"apiKey": "sk-very-secret-value"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Row.Values["apiKey"]; ok || !res.Row.Secrets["apiKey"] {
		t.Fatalf("update answer carries the secret: %+v", res.Row.Values)
	}
	st, _ := os.Stat(file)
	dir, _ := os.Stat(filepath.Dir(file))
	raw, _ := os.ReadFile(file)
	if st.Mode().Perm() != 0o600 || dir.Mode().Perm() != 0o700 || !strings.Contains(string(raw), "sk-very-secret-value") || !strings.Contains(string(raw), "policy: never") {
		t.Fatalf("settings file %v %v:\n%s", st.Mode(), dir.Mode(), raw)
	}
	snap, _ = svc.Get()
	if rev := snap.Revision; rev == "0" || rev != res.Revision {
		t.Fatalf("revision %q after %q", rev, res.Revision)
	}

	// The web row is what serves this page: saved, applied on restart.
	res, err = svc.Update(ctx, "web", snap.Revision, map[string]any{"maxBodyBytes": 2 << 20})
	if err != nil || res.Applied {
		t.Fatalf("web row: %+v %v", res, err)
	}

	// Over HTTP: a stale revision is 409, a bad value 422 with its field.
	e.srv.UseSettings(svc)
	code, body := e.req("PATCH", "/api/settings/approval", map[string]any{"revision": "stale", "values": map[string]any{"policy": "ask"}})
	if code != 409 {
		t.Fatalf("stale over HTTP: %d %s", code, body)
	}
	snap, _ = svc.Get()
	code, body = e.req("PATCH", "/api/settings/approval", map[string]any{"revision": snap.Revision, "values": map[string]any{"policy": "sometimes"}})
	if code != 422 || !strings.Contains(string(body), `"policy"`) {
		t.Fatalf("bad value over HTTP: %d %s", code, body)
	}
	code, body = e.req("GET", "/api/settings", nil)
	if code != 200 || strings.Contains(string(body), "sk-very-secret-value") || strings.Contains(string(body), "sk-test") {
		t.Fatalf("GET /api/settings: %d, leaks a secret: %s", code, body)
	}
}

// TestSettingsNullRevertsToTheManifestValue: with Options.Base (what
// `harness serve` passes), a key saved in the settings and then set to null
// falls back to the value harness.yml gives it, not to the plugin's
// default, in the running tree at once and after a restart alike.
func TestSettingsNullRevertsToTheManifestValue(t *testing.T) {
	t.Parallel()
	e := startWith(t, nil, func(modelURL, state string) string {
		return strings.Replace(testManifest(modelURL, state, "default", ""), "config: {answerer: headless}", "config: {answerer: headless, policy: never}", 1)
	})
	file := filepath.Join(t.TempDir(), "settings.yml")
	base := func() (*manifest.Manifest, error) { return manifest.Parse("harness.yml", []byte(e.manifest)) }
	svc := settings.New(e.h.Loader, settings.Options{File: file, Catalog: e.h.Catalog, Base: base})
	ctx := context.Background()
	policy := func(h *fxcore.Harness) string {
		t.Helper()
		a, _ := core.Lookup(h.Root.Context(), tools.ApprovalKey)
		if strings.Contains(a.(interface{ Unanswerable() string }).Unanswerable(), `"never"`) {
			return "never"
		}
		return "not never"
	}
	if p := policy(e.h); p != "never" {
		t.Fatalf("harness.yml's policy: %s", p)
	}
	snap, _ := svc.Get()
	res, err := svc.Update(ctx, "approval", snap.Revision, map[string]any{"policy": "ask"})
	if err != nil || !res.Applied || policy(e.h) != "not never" || res.Row.Values["policy"] != "ask" {
		t.Fatalf("set: %+v %v, running %s", res, err, policy(e.h))
	}
	res, err = svc.Update(ctx, "approval", res.Revision, map[string]any{"policy": nil})
	if err != nil || res.Row.Values["policy"] != "never" {
		t.Fatalf("null: %+v %v", res, err)
	}
	if p := policy(e.h); p != "never" {
		t.Fatalf("after null the running policy is %s, want harness.yml's never", p)
	}
	if raw, _ := os.ReadFile(file); strings.Contains(string(raw), "policy") {
		t.Fatalf("the settings file still sets the key:\n%s", raw)
	}
	// A restart composes harness.yml and the settings file: the same value.
	restarted := harnesstest.Start(t, e.manifest, harness.WithPatchFiles(file))
	if p := policy(restarted); p != "never" {
		t.Fatalf("after a restart the policy is %s", p)
	}
	if snap, _ := svc.Get(); rowOf(t, snap, "approval").Values["policy"] != "never" {
		t.Fatalf("Get after null: %+v", rowOf(t, snap, "approval").Values)
	}
}

func rowOf(t *testing.T, s settings.Snapshot, id string) settings.Row {
	t.Helper()
	for _, r := range s.Rows {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no row %q", id)
	return settings.Row{}
}

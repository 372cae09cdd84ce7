package loader_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/loader"
	"github.com/dshgo/harness/core/manifest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) inc(k string) { c.mu.Lock(); c.n[k]++; c.mu.Unlock() }
func (c *counter) get(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}

type valCfg struct {
	N    int  `yaml:"n"`
	Fail bool `yaml:"fail"`
}

var svc = core.NewKey[int]("svc")

func fixture(t *testing.T) (*loader.Loader, *counter, *core.Root) {
	t.Helper()
	cnt := &counter{n: map[string]int{}}
	plain := core.Define("plain", func(c *core.Context, cfg valCfg) error {
		cnt.inc("plain")
		if cfg.Fail {
			return errors.New("configured to fail")
		}
		return nil
	})
	prov := core.Define("prov", func(c *core.Context, cfg valCfg) error {
		cnt.inc("prov")
		return core.Provide(c, svc, cfg.N)
	})
	cons := core.Define("cons", func(c *core.Context, cfg valCfg) error {
		cnt.inc("cons")
		return nil
	}, core.WithInject("svc"))
	cat, err := core.NewCatalog(plain, prov, cons)
	if err != nil {
		t.Fatal(err)
	}
	root := core.NewRoot(core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(func() { _ = root.Dispose(context.Background()) })
	return loader.New(root, cat, nil), cnt, root
}

func parse(t *testing.T, s string) *manifest.Manifest {
	t.Helper()
	m, err := manifest.Parse("harness.yml", []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestReconcileReappliesOnlyChangedRows(t *testing.T) {
	l, cnt, _ := fixture(t)
	ctx := context.Background()
	if err := l.Apply(ctx, parse(t, "plugins:\n  - {id: a, name: plain}\n  - {id: p, name: prov}\n  - {id: c, name: cons}\n")); err != nil {
		t.Fatal(err)
	}
	if err := l.Audit(); err != nil {
		t.Fatal(err)
	}
	fa, fc := l.Fiber("a"), l.Fiber("c")
	// config of a only: a reloads, others untouched.
	if err := l.Reconcile(ctx, parse(t, "plugins:\n  - {id: a, name: plain, config: {n: 1}}\n  - {id: p, name: prov}\n  - {id: c, name: cons}\n")); err != nil {
		t.Fatal(err)
	}
	if cnt.get("plain") != 2 || cnt.get("prov") != 1 || cnt.get("cons") != 1 || l.Fiber("a") != fa {
		t.Fatalf("counts %v", cnt.n)
	}
	// config of the provider: it and its dependent reload.
	if err := l.Reconcile(ctx, parse(t, "plugins:\n  - {id: a, name: plain, config: {n: 1}}\n  - {id: p, name: prov, config: {n: 2}}\n  - {id: c, name: cons}\n")); err != nil {
		t.Fatal(err)
	}
	if cnt.get("prov") != 2 || cnt.get("cons") != 2 || l.Fiber("c") != fc || fc.State() != core.StateActive {
		t.Fatalf("counts %v state %v", cnt.n, fc.State())
	}
	// remove a, disable c.
	if err := l.Reconcile(ctx, parse(t, "plugins:\n  - {id: p, name: prov, config: {n: 2}}\n  - {id: c, name: cons, disabled: true}\n")); err != nil {
		t.Fatal(err)
	}
	if fa.State() != core.StateDisposed || fc.State() != core.StateDisposed || l.Fiber("a") != nil {
		t.Fatalf("a %v c %v", fa.State(), fc.State())
	}
	st := l.Status()
	if len(st) != 2 || st[1].State != "disabled" {
		t.Fatalf("status %+v", st)
	}
}

func TestReconcileRollsBackOnFailure(t *testing.T) {
	l, cnt, _ := fixture(t)
	ctx := context.Background()
	good := "plugins:\n  - {id: a, name: plain, config: {n: 1}}\n  - {id: p, name: prov}\n"
	if err := l.Apply(ctx, parse(t, good)); err != nil {
		t.Fatal(err)
	}
	fa := l.Fiber("a")
	bad := "plugins:\n  - {id: a, name: plain, config: {n: 5}}\n  - {id: p, name: prov}\n  - {id: x, name: plain, config: {fail: true}}\n"
	err := l.Reconcile(ctx, parse(t, bad))
	var ee *loader.EntryError
	if !errors.As(err, &ee) || ee.ID != "x" || !strings.Contains(err.Error(), "failed to apply harness entry x (plain): configured to fail") {
		t.Fatalf("err = %v", err)
	}
	if l.Fiber("x") != nil || l.Fiber("a") != fa || fa.State() != core.StateActive {
		t.Fatalf("not rolled back: x=%v a=%v", l.Fiber("x"), fa.State())
	}
	if cfg := fa.Config().(*valCfg); cfg.N != 1 {
		t.Fatalf("config not restored: %+v", cfg)
	}
	if l.Current().Plugins[0].Config.Content[1].Value != "1" {
		t.Fatal("current manifest changed")
	}
	_ = cnt
}

func TestResolveReportsEveryBadRow(t *testing.T) {
	l, _, _ := fixture(t)
	err := l.Apply(context.Background(), parse(t, "plugins:\n  - {id: a, name: nope}\n  - {id: b, name: plain, config: {m: 1}}\n  - {id: c, name: nope2, disabled: true}\n"))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`harness.yml:2:19: unknown plugin "nope" (id a); known plugins: cons, plain, prov`, `harness.yml:3:35: plugin "plain" (id b): invalid config: unknown key "m"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "nope2") {
		t.Error("disabled row was resolved")
	}
	// On a row written over several lines the error points at the name.
	err = l.Apply(context.Background(), parse(t, "plugins:\n  - id: a\n    config: {}\n    name: nope\n"))
	if err == nil || !strings.HasPrefix(err.Error(), `harness.yml:4:11: unknown plugin "nope"`) {
		t.Errorf("unknown plugin on its own line: %v", err)
	}
}

func TestAuditNamesPendingAndFailedRows(t *testing.T) {
	l, _, _ := fixture(t)
	if err := l.Apply(context.Background(), parse(t, "plugins:\n  - {id: c, name: cons}\n")); err != nil {
		t.Fatal(err)
	}
	err := l.Audit()
	if err == nil || err.Error() != "1 entry did not activate\n  c (cons): pending (waiting for service: svc)" {
		t.Fatalf("audit = %v", err)
	}
}

// A reload that swaps one provider of a service for another (disable one
// row, enable or add the other; or rename a row's id) must succeed: rows
// that go away are disposed before new rows are mounted.
func TestReconcileSwapsProviders(t *testing.T) {
	l, _, _ := fixture(t)
	ctx := context.Background()
	if err := l.Apply(ctx, parse(t, "plugins:\n  - {id: p1, name: prov, config: {n: 1}}\n  - {id: p2, name: prov, config: {n: 2}, disabled: true}\n  - {id: c, name: cons}\n")); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{
		"plugins:\n  - {id: p1, name: prov, config: {n: 1}, disabled: true}\n  - {id: p2, name: prov, config: {n: 2}}\n  - {id: c, name: cons}\n",
		"plugins:\n  - {id: p3, name: prov, config: {n: 2}}\n  - {id: c, name: cons}\n",
	} {
		if err := l.Reconcile(ctx, parse(t, m)); err != nil {
			t.Fatalf("swap %q: %v", m, err)
		}
		if err := l.Audit(); err != nil {
			t.Fatal(err)
		}
	}
	// A failing reload restores the removed rows too.
	fc := l.Fiber("c")
	err := l.Reconcile(ctx, parse(t, "plugins:\n  - {id: p4, name: prov}\n  - {id: c, name: cons}\n  - {id: x, name: plain, config: {fail: true}}\n"))
	if err == nil {
		t.Fatal("failing reload succeeded")
	}
	if l.Fiber("p4") != nil || l.Fiber("p3") == nil || l.Fiber("c") != fc {
		t.Fatalf("not rolled back: p3=%v p4=%v", l.Fiber("p3"), l.Fiber("p4"))
	}
	if err := l.Fiber("p3").Await(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Audit(); err != nil {
		t.Fatalf("after rollback: %v", err)
	}
	if st := l.Status(); len(st) != 2 || st[0].ID != "p3" {
		t.Fatalf("status %+v", st)
	}
}

func TestMountKeepsFailedAndPendingRows(t *testing.T) {
	l, _, _ := fixture(t)
	err := l.Mount(context.Background(), parse(t, "plugins:\n  - {id: a, name: plain}\n  - {id: x, name: plain, config: {fail: true}}\n  - {id: c, name: cons}\n"))
	if err != nil {
		t.Fatal(err)
	}
	st := l.Status()
	if len(st) != 3 || st[0].State != "active" || st[1].State != "failed" || st[1].Error != "configured to fail" || st[2].State != "pending" {
		t.Fatalf("status %+v", st)
	}
}

type validatedCfg struct {
	N int `yaml:"n"`
}

func (c validatedCfg) Validate() error {
	if c.N < 0 {
		return &core.ConfigError{Issues: []core.Issue{{Path: "n", Message: "must not be negative"}}}
	}
	return nil
}

// A resolve problem is a *manifest.Error at the row's place, and a
// *core.ConfigError from the plugin's Validate is still found by errors.As
// through it (and through the joined errors of several rows).
func TestResolveErrorsKeepTheirTypes(t *testing.T) {
	p := core.Define("validated", func(*core.Context, validatedCfg) error { return nil })
	cat, err := core.NewCatalog(p)
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Parse("h.yml", []byte("plugins:\n  - name: validated\n    config: {n: -1}\n  - name: nope\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = loader.Resolve(m, cat, nil)
	var ce *core.ConfigError
	if !errors.As(err, &ce) || ce.Plugin != "validated" || ce.Issues[0].Path != "n" {
		t.Fatalf("errors.As ConfigError: %v (%#v)", err, ce)
	}
	var me *manifest.Error
	if !errors.As(err, &me) || me.Pos.File != "h.yml" || me.Pos.Line != 3 {
		t.Fatalf("errors.As manifest.Error: %v (%#v)", err, me)
	}
	const want = "h.yml:3:17: plugin \"validated\" (id validated): invalid config: n: must not be negative\n" +
		"h.yml:4:11: unknown plugin \"nope\" (id nope); known plugins: validated"
	if err.Error() != want {
		t.Fatalf("got\n%s\nwant\n%s", err, want)
	}
}

package core_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dshgo/harness/core"
)

type ptrCfg struct{ N int }

func (c *ptrCfg) SetDefaults() { c.N = 7 }

// A plugin whose config type is a pointer would skip SetDefaults (nil with
// no config); it is rejected wherever it is used, with an error that says
// what to write instead.
func TestPointerConfigTypeIsRejected(t *testing.T) {
	// Serial: it calls core.Register, which reaches the process-wide catalog.
	ran := false
	p := core.Define("ptr-cfg", func(_ *core.Context, cfg *ptrCfg) error { ran = true; return nil })

	_, err := core.NewCatalog(p)
	if !errors.Is(err, core.ErrPointerConfig) {
		t.Fatalf("NewCatalog: %v, want ErrPointerConfig", err)
	}
	for _, want := range []string{`plugin "ptr-cfg"`, "*core_test.ptrCfg", "func(*core.Context, core_test.ptrCfg)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}

	func() {
		defer func() {
			v := recover()
			if e, ok := v.(error); !ok || !errors.Is(e, core.ErrPointerConfig) {
				t.Errorf("Register: recovered %v, want a panic with ErrPointerConfig", v)
			}
		}()
		core.Register(p)
	}()

	r := newRoot(t)
	f := r.Context().Plugin(p, nil)
	if err := f.Await(context.Background()); !errors.Is(err, core.ErrPointerConfig) {
		t.Fatalf("mounted: %v (state %v), want ErrPointerConfig", err, f.State())
	}
	if ran {
		t.Fatal("apply ran with a pointer config")
	}

	// The value form is accepted and gets its defaults.
	var got ptrCfg
	ok := core.Define("value-cfg", func(_ *core.Context, cfg ptrCfg) error { got = cfg; return nil })
	if err := r.Context().Plugin(ok, nil).Await(context.Background()); err != nil || got.N != 7 {
		t.Fatalf("value config: err %v, N %d (want 7 from SetDefaults)", err, got.N)
	}
}

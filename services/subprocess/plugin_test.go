//go:build unix

package subprocess

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
)

// mountPlugin mounts the plugin with cfg under a new root, waits for it
// (bounded by ctx) and returns the root and the runtime it provides.
func mountPlugin(t *testing.T, ctx context.Context, cfg any) (*core.Root, *Runtime) {
	t.Helper()
	root := core.NewRoot()
	if err := root.Context().Plugin(Plugin, cfg).Await(ctx); err != nil {
		t.Fatal(err)
	}
	rt, ok := core.Lookup(root.Context(), Key)
	if !ok {
		t.Fatal("subprocess service not provided")
	}
	return root, rt
}

func TestPluginProvidesRuntimeAndDisposalKillsChildren(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	root, rt := mountPlugin(t, ctx, nil)
	m := marker(3610)
	h, err := rt.Spawn(collectSpec(nil, "sleep "+m+" & exec sleep "+m, 64, time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := root.Dispose(ctx); err != nil {
		t.Fatal(err)
	}
	if out, _ := h.Outcome(); out.Signal != "SIGTERM" {
		t.Fatalf("outcome after disposal %v", out)
	}
	assertNoSurvivor(t, "sleep "+m, 0)
	if _, err := rt.Spawn(collectSpec(nil, "true", 64, time.Second)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Spawn after disposal = %v", err)
	}
}

func TestPluginConfigValidation(t *testing.T) {
	root := core.NewRoot()
	defer root.Dispose(context.Background())
	f := root.Context().Plugin(Plugin, Options{Isolation: "vm"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = f.Await(ctx)
	if f.Err() == nil || !strings.Contains(f.Err().Error(), `isolation: must be auto, cgroup or pgid, got "vm"`) {
		t.Fatalf("fiber err = %v", f.Err())
	}
}

func TestPluginDefaults(t *testing.T) {
	cfg := Plugin.NewConfig().(*Options)
	if cfg.Isolation != IsolationAuto || !cfg.Env.Drops("GOOGLE_APPLICATION_CREDENTIALS") || !cfg.Env.Drops("SSH_PASSPHRASE") || cfg.Env.Drops("PATH") {
		t.Fatalf("defaults %+v", cfg)
	}
}

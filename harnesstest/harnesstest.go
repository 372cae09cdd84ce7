// Package harnesstest boots harnesses in tests the way production does:
// from a manifest, through the catalog, the loader and fx (dsh postmortem
// 0001: tests that mount plugins by hand skip the path that breaks).
//
//	h := harnesstest.Start(t, "plugins:\n  - name: hello\n", harness.WithPlugins(hello.Plugin))
//	g := harnesstest.Service(t, h, hello.Key)
//
// The harness is stopped when the test ends. Use go.uber.org/goleak in
// TestMain to check that nothing outlives it.
package harnesstest

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/dshgo/harness"
	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/core/fxcore"
)

// Start builds and starts a harness from manifest (harness.yml text) with
// extra options (plugins, modules, env). Logs are discarded unless the
// options set a logger. Start fails the test if the boot fails, including
// the boot audit (every enabled row active).
func Start(tb testing.TB, manifest string, opts ...harness.Option) *fxcore.Harness {
	tb.Helper()
	base := []harness.Option{harness.WithManifest([]byte(manifest)), harness.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}
	h, err := harness.New(append(base, opts...)...)
	if err != nil {
		tb.Fatalf("harnesstest: build: %v", err)
	}
	if err := h.Start(context.Background()); err != nil {
		tb.Fatalf("harnesstest: start: %v", err)
	}
	tb.Cleanup(func() {
		if err := h.Stop(context.Background()); err != nil {
			tb.Errorf("harnesstest: stop: %v", err)
		}
	})
	return h
}

// Service returns the service k of a started harness, failing the test if
// no active plugin provides it.
func Service[T any](tb testing.TB, h *fxcore.Harness, k core.Key[T]) T {
	tb.Helper()
	v, ok := core.Lookup(h.Root.Context(), k)
	if !ok {
		tb.Fatalf("harnesstest: service %q is not provided", k.Name())
	}
	return v
}

package spill

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
)

func newRoot(t *testing.T) *core.Root {
	t.Helper()
	root := core.NewRoot(core.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(func() { _ = root.Dispose(context.Background()) })
	return root
}

func mountLocal(t *testing.T, root *core.Root, cfg Config) (*core.Fiber, Store) {
	t.Helper()
	f := root.Context().Plugin(Plugin, cfg)
	if err := f.Await(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f.State() != core.StateActive {
		t.Fatalf("state %v: %v", f.State(), f.Err())
	}
	s, ok := core.Lookup(root.Context(), Key)
	if !ok {
		t.Fatal("spillStore not provided")
	}
	return f, s
}

func TestPluginDisposalDeletesTheRunsSpills(t *testing.T) {
	for _, keep := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "spill")
		root := newRoot(t)
		f, s := mountLocal(t, root, Config{Root: dir, Keep: keep})
		ref, err := s.SaveText(context.Background(), toolReq("sess", "bash.txt", "output"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(ref.Locator), dir+string(os.PathSeparator)) {
			t.Errorf("locator %s outside the configured root", ref.Locator)
		}
		if err := f.Dispose(context.Background()); err != nil {
			t.Fatal(err)
		}
		_, err = os.Stat(string(ref.Locator))
		if kept := err == nil; kept != keep {
			t.Errorf("keep=%v: file kept after disposal = %v", keep, kept)
		}
		if _, ok := core.Lookup(root.Context(), Key); ok {
			t.Error("service still provided after disposal")
		}
	}
}

func TestPluginRetentionAtStartAndOnTimer(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "spill")
	old := filepath.Join(dir, "session-000000000000", "000000000000000000000000-old.txt")
	os.MkdirAll(filepath.Dir(old), 0o700)
	os.WriteFile(old, []byte("x"), 0o600)
	past := time.Now().Add(-48 * time.Hour)
	os.Chtimes(old, past, past)

	root := newRoot(t)
	_, s := mountLocal(t, root, Config{Root: dir, MaxAge: 24 * time.Hour, CleanupInterval: 10 * time.Millisecond, Keep: true})
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Fatal("old spill survived retention at start")
	}
	ref, err := s.SaveText(context.Background(), toolReq("sess", "a.txt", "x"))
	if err != nil {
		t.Fatal(err)
	}
	os.Chtimes(string(ref.Locator), past, past)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(string(ref.Locator)); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the retention timer did not delete an aged spill file")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestPluginConfig(t *testing.T) {
	var cfg Config
	cfg.SetDefaults()
	if cfg.MaxAge != 168*time.Hour || cfg.CleanupInterval != time.Hour || cfg.Keep || cfg.Root != "" {
		t.Errorf("defaults = %+v", cfg)
	}
	bad := Config{MaxAge: -1, CleanupInterval: -1}
	err := bad.Validate()
	if err == nil || !strings.Contains(err.Error(), "maxAge: must not be negative") || !strings.Contains(err.Error(), "cleanupInterval: must not be negative") {
		t.Errorf("Validate = %v", err)
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	root := newRoot(t)
	f := root.Context().Plugin(Plugin, Config{Root: file})
	f.Await(context.Background())
	if f.State() == core.StateActive || f.Err() == nil {
		t.Errorf("a file root activated: %v", f.State())
	}
}

func TestDefaultRoot(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/state")
	if r, _ := DefaultRoot(); r != "/state/harness/spill" {
		t.Errorf("DefaultRoot = %q", r)
	}
	t.Setenv("XDG_STATE_HOME", "relative")
	t.Setenv("HOME", "/home/u")
	if r, _ := DefaultRoot(); r != "/home/u/.local/state/harness/spill" {
		t.Errorf("DefaultRoot = %q", r)
	}
}

func TestPluginWithoutHomeUsesAPrivateTempRoot(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	root := newRoot(t)
	_, s := mountLocal(t, root, Config{})
	ref, err := s.SaveText(context.Background(), toolReq("s", "x.txt", "y"))
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(tmp, string(ref.Locator))
	if err != nil || !strings.HasPrefix(rel, "harness-spill-") {
		t.Fatalf("locator %s not under a private temp root in %s", ref.Locator, tmp)
	}
	dir := filepath.Join(tmp, strings.Split(rel, string(os.PathSeparator))[0])
	fi, _ := os.Stat(dir)
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("temp root mode %v", fi.Mode().Perm())
	}
	root.Dispose(context.Background())
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Error("the temporary root survived disposal")
	}
}

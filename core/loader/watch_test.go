package loader_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshgo/harness/core/loader"
	"github.com/dshgo/harness/core/manifest"
)

func TestWatchReloadsAndKeepsTheLastGoodTree(t *testing.T) {
	l, cnt, _ := fixture(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "harness.yml")
	// write replaces the file in one step (content and mtime together), so
	// the poller sees exactly one change per write: writing in place and then
	// moving the mtime showed two, and a stale "reloaded" result was read as
	// the answer to the next write.
	write := func(s string) {
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		// Make the change visible even on coarse mtime clocks.
		future := time.Now().Add(time.Duration(len(s)) * time.Second)
		_ = os.Chtimes(tmp, future, future)
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	write("plugins:\n  - {id: a, name: plain}\n")
	m, _ := manifest.ReadFile(path)
	if err := l.Apply(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	results := make(chan error, 10)
	var wg sync.WaitGroup
	wg.Add(1)
	w := l.Watcher(loader.WatchOptions{
		Paths:    []string{path},
		Load:     func() (*manifest.Manifest, error) { return manifest.ReadFile(path) },
		Interval: 10 * time.Millisecond,
		OnReload: func(err error) { results <- err },
	})
	go func() {
		defer wg.Done()
		_ = w.Run(ctx)
	}()
	defer func() { cancel(); wg.Wait() }()

	write("plugins:\n  - {id: a, name: plain, config: {n: 2}}\n")
	if err := <-results; err != nil {
		t.Fatal(err)
	}
	if cnt.get("plain") != 2 {
		t.Fatalf("plain applied %d times", cnt.get("plain"))
	}
	write("plugins:\n\t- broken\n")
	if err := <-results; err == nil || !strings.Contains(err.Error(), "tab character") {
		t.Fatalf("err = %v", err)
	}
	if l.Fiber("a") == nil || cnt.get("plain") != 2 {
		t.Fatal("last good tree not kept")
	}
}

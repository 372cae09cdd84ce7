package loader

import (
	"context"
	"os"
	"time"

	"github.com/dshgo/harness/core/manifest"
)

// WatchOptions configure [Loader.Watch].
type WatchOptions struct {
	// Paths are the files to watch (the manifest and its patch layers).
	Paths []string
	// Load reads and composes the manifest anew.
	Load func() (*manifest.Manifest, error)
	// Interval is how often the files are checked (default 1 s).
	Interval time.Duration
	// OnReload is called after each attempt: err is nil when the new tree
	// is running, else the reason the last good tree was kept.
	OnReload func(err error)
}

type fileStamp struct {
	mod  time.Time
	size int64
	ok   bool
}

func stamps(paths []string) []fileStamp {
	out := make([]fileStamp, len(paths))
	for i, p := range paths {
		if st, err := os.Stat(p); err == nil {
			out[i] = fileStamp{mod: st.ModTime(), size: st.Size(), ok: true}
		}
	}
	return out
}

func sameStamps(a, b []fileStamp) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Watcher reloads a loader's manifest when its files change. Create it
// with [Loader.Watcher], which records the files' current state, then Run it.
type Watcher struct {
	l    *Loader
	o    WatchOptions
	last []fileStamp
}

// Watcher records the current state of o.Paths (so changes made after it
// returns are seen) and returns a watcher to Run.
func (l *Loader) Watcher(o WatchOptions) *Watcher {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	return &Watcher{l: l, o: o, last: stamps(o.Paths)}
}

// Paths returns the watched files.
func (w *Watcher) Paths() []string { return w.o.Paths }

// Run polls the files every Interval until ctx ends (see [Watcher.Poll]).
// The initial state is not a change (dsh mod #12: a watcher's initial scan
// raced the initial apply). Run Watch in a goroutine owned by its caller
// (core.Go in a plugin); it returns ctx.Err().
func (w *Watcher) Run(ctx context.Context) error {
	t := time.NewTicker(w.o.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		_, _ = w.Poll(ctx) // OnReload receives its error
	}
}

// Poll checks the files once and, when one changed (modification time or
// size) since the watcher was made or last polled, loads the manifest again
// and reconciles it. changed reports whether a change was seen; err is nil
// when the new tree is running, else the reason the last good tree was kept
// (a file that fails to parse, or a tree that fails to apply). Either way
// OnReload is called, and the next change is tried again. Reloads are
// serialized with every other Reconcile. A caller that must not reload
// while it works (an interactive session mid-turn) polls between its units
// of work instead of running Run; Poll and Run must not run concurrently.
func (w *Watcher) Poll(ctx context.Context) (changed bool, err error) {
	now := stamps(w.o.Paths)
	if sameStamps(now, w.last) {
		return false, nil
	}
	w.last = now
	m, err := w.o.Load()
	if err == nil {
		err = w.l.Reconcile(ctx, m)
	}
	if w.o.OnReload != nil {
		w.o.OnReload(err)
	}
	return true, err
}

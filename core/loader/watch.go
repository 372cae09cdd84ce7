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

// Run polls the files until ctx ends and, when one changes (modification
// time or size), loads the manifest again and reconciles it. A file that
// fails to parse, or a tree that fails to apply, leaves the last good tree
// running and is reported through OnReload; the next change is tried
// again. The initial state is not a change (dsh mod #12: a watcher's
// initial scan raced the initial apply). Reloads are serialized with every
// other Reconcile. Run Watch in a goroutine owned by its caller (core.Go in
// a plugin); it returns ctx.Err().
func (w *Watcher) Run(ctx context.Context) error {
	l, o, last := w.l, w.o, w.last
	t := time.NewTicker(o.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		now := stamps(o.Paths)
		if sameStamps(now, last) {
			continue
		}
		last = now
		m, err := o.Load()
		if err == nil {
			err = l.Reconcile(ctx, m)
		}
		if o.OnReload != nil {
			o.OnReload(err)
		}
	}
}

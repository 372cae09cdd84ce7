package checkpoints

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/dshgo/harness/services/workspaces/ignore"
)

// Kind is what a manifest entry is.
type Kind string

// The entry kinds.
const (
	KindFile    Kind = "file"
	KindSymlink Kind = "symlink"
	KindDir     Kind = "dir"
)

// Entry is one path of a checkpoint.
type Entry struct {
	Kind   Kind        `json:"kind"`
	Mode   fs.FileMode `json:"mode"`             // permission bits
	Size   int64       `json:"size,omitempty"`   // file bytes
	Blob   string      `json:"blob,omitempty"`   // file content sha256
	Target string      `json:"target,omitempty"` // symlink target, as written
}

// same reports whether a and b describe the same content.
func (e Entry) same(o Entry) bool {
	return e.Kind == o.Kind && e.Mode == o.Mode && e.Blob == o.Blob && e.Target == o.Target
}

// Skip is a path a checkpoint left out, and why ("ignored", "too large",
// "unreadable: …", "special file").
type Skip struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Reasons the checkpoint plugin records in Meta.Reason; Rewind records
// its own, "rewind".
const (
	ReasonPrompt  = "prompt"   // before a user prompt
	ReasonTurnEnd = "turn-end" // when the model ended its turn
)

// Meta is what the caller says about a checkpoint.
type Meta struct {
	Session string `json:"session,omitempty"`
	Turn    int    `json:"turn,omitempty"`
	Prompt  string `json:"prompt,omitempty"` // an excerpt: Take keeps 200 bytes
	Reason  string `json:"reason,omitempty"` // "prompt", "turn-end", "tool", "rewind"
}

// Checkpoint is a manifest of the workspace at one moment.
type Checkpoint struct {
	ID      int              `json:"id"`
	Time    time.Time        `json:"time"`
	Meta    Meta             `json:"meta"`
	Entries map[string]Entry `json:"entries"` // slash paths relative to the workspace
	Skipped []Skip           `json:"skipped,omitempty"`
}

// statKey is what the stat cache trusts: a file whose key matches was not
// re-read.
type statKey struct {
	Size  int64       `json:"s"`
	MTime int64       `json:"m"` // ns
	CTime int64       `json:"c"` // ns
	Inode uint64      `json:"i"`
	Mode  fs.FileMode `json:"p"`
}

type statCache struct {
	Taken int64                    `json:"taken"` // ns, when the scan started
	Files map[string]statCacheItem `json:"files"`
}

type statCacheItem struct {
	Key  statKey `json:"k"`
	Blob string  `json:"b"`
}

// racyWindow: a file modified this close to (or after) the previous scan's
// start may have changed again within the same timestamp tick, so its cache
// entry is not trusted (git's "racily clean" rule).
const racyWindow = 2 * time.Second

func keyOf(info fs.FileInfo) statKey {
	k := statKey{Size: info.Size(), MTime: info.ModTime().UnixNano(), Mode: info.Mode()}
	k.Inode, k.CTime = inodeCTime(info)
	return k
}

// loadCacheLocked returns the stat cache: the one this Store wrote last,
// else the file's (another Store's, or a bad one: then empty).
func (s *Store) loadCacheLocked() statCache {
	if s.cache != nil {
		return *s.cache
	}
	var c statCache
	data, err := os.ReadFile(filepath.Join(s.dir, "statcache.json"))
	if err == nil {
		_ = json.Unmarshal(data, &c) // a bad cache is an empty cache
	}
	if c.Files == nil {
		c.Files = map[string]statCacheItem{}
	}
	return c
}

// scanner walks the workspace once, storing blobs when store is true.
type scanner struct {
	s     *Store
	ctx   context.Context
	store bool
	old   statCache
	next  statCache
	out   *Checkpoint
}

// Take snapshots the workspace, saves the checkpoint, updates the stat
// cache and prunes. It reads only files whose stat changed since the last
// scan.
func (s *Store) Take(ctx context.Context, meta Meta) (*Checkpoint, error) {
	if ctx == nil {
		return nil, fmt.Errorf("checkpoints: nil context")
	}
	if len(meta.Prompt) > 200 {
		meta.Prompt = meta.Prompt[:200]
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, cache, err := s.scanLocked(ctx, true)
	if err != nil {
		return nil, err
	}
	c.Meta = meta
	if err := s.save(c); err != nil {
		return nil, err
	}
	s.cache = &cache
	if data, err := json.Marshal(cache); err == nil {
		_ = writeAtomic(filepath.Join(s.dir, "statcache.json"), data) // a cache: losing it costs time only
	}
	if err := s.pruneLocked(c); err != nil {
		return c, err
	}
	return c, nil
}

// scanLocked returns the current tree as an unsaved checkpoint.
func (s *Store) scanLocked(ctx context.Context, store bool) (*Checkpoint, statCache, error) {
	now := time.Now()
	sc := &scanner{s: s, ctx: ctx, store: store, old: s.loadCacheLocked(),
		next: statCache{Taken: now.UnixNano(), Files: map[string]statCacheItem{}},
		out:  &Checkpoint{Time: now.UTC(), Entries: map[string]Entry{}}}
	if err := sc.walk(s.root, "", ignore.ParentChain(s.root)); err != nil {
		return nil, statCache{}, err
	}
	return sc.out, sc.next, nil
}

func (sc *scanner) walk(dir, rel string, chain ignore.Chain) error {
	if err := sc.ctx.Err(); err != nil {
		return err
	}
	chain = chain.WithDir(dir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("checkpoints: %s: %w", dir, err)
	}
	for _, e := range ents {
		abs := filepath.Join(dir, e.Name())
		r := e.Name()
		if rel != "" {
			r = rel + "/" + e.Name()
		}
		if e.Name() == ".git" {
			continue
		}
		if chain.Ignored(abs, e.IsDir()) {
			sc.out.Skipped = append(sc.out.Skipped, Skip{Path: r, Reason: "ignored"})
			continue
		}
		if err := sc.entry(abs, r, chain); err != nil {
			return err
		}
	}
	return nil
}

func (sc *scanner) entry(abs, rel string, chain ignore.Chain) error {
	if n := sc.s.limits.MaxEntries; len(sc.out.Entries) >= n {
		return fmt.Errorf("checkpoints: %s holds more than %d files, directories and links (maxEntries), so no checkpoint is taken: ignore the bulk in .gitignore or raise the limit: %w", sc.s.root, n, ErrTooManyEntries)
	}
	info, err := os.Lstat(abs)
	if err != nil {
		sc.out.Skipped = append(sc.out.Skipped, Skip{Path: rel, Reason: "unreadable: " + err.Error()})
		return nil
	}
	switch {
	case info.IsDir():
		sc.out.Entries[rel] = Entry{Kind: KindDir, Mode: info.Mode().Perm()}
		return sc.walk(abs, rel, chain)
	case info.Mode()&fs.ModeSymlink != 0:
		target, err := os.Readlink(abs)
		if err != nil {
			sc.out.Skipped = append(sc.out.Skipped, Skip{Path: rel, Reason: "unreadable: " + err.Error()})
			return nil
		}
		sc.out.Entries[rel] = Entry{Kind: KindSymlink, Mode: info.Mode().Perm(), Target: target}
	case info.Mode().IsRegular():
		return sc.file(abs, rel, info)
	default:
		sc.out.Skipped = append(sc.out.Skipped, Skip{Path: rel, Reason: "special file"})
	}
	return nil
}

func (sc *scanner) file(abs, rel string, info fs.FileInfo) error {
	if info.Size() > sc.s.limits.MaxFileBytes {
		sc.out.Skipped = append(sc.out.Skipped, Skip{Path: rel, Reason: fmt.Sprintf("too large (%d bytes, limit %d)", info.Size(), sc.s.limits.MaxFileBytes)})
		return nil
	}
	key := keyOf(info)
	blob := ""
	if it, ok := sc.old.Files[rel]; ok && it.Key == key && key.MTime < sc.old.Taken-int64(racyWindow) {
		if !sc.store || sc.s.haveBlobLocked(it.Blob) {
			blob = it.Blob
		}
	}
	if blob == "" {
		data, err := os.ReadFile(abs)
		if err != nil {
			sc.out.Skipped = append(sc.out.Skipped, Skip{Path: rel, Reason: "unreadable: " + err.Error()})
			return nil
		}
		if sc.store {
			if blob, err = sc.s.putBlob(data); err != nil {
				return fmt.Errorf("checkpoints: store %s: %w", rel, err)
			}
		} else {
			blob = sumOf(data)
		}
	}
	sc.next.Files[rel] = statCacheItem{Key: key, Blob: blob}
	sc.out.Entries[rel] = Entry{Kind: KindFile, Mode: info.Mode().Perm(), Size: info.Size(), Blob: blob}
	return nil
}

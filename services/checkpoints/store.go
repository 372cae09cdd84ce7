package checkpoints

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// Limits bound a store. Zero fields take the defaults.
type Limits struct {
	// MaxFileBytes: files larger than this are not checkpointed (they are
	// listed in Checkpoint.Skipped). Default 10 MiB.
	MaxFileBytes int64
	// MaxCheckpoints: the oldest checkpoints beyond this count are pruned.
	// Default 100.
	MaxCheckpoints int
	// MaxStoreBytes: the oldest checkpoints are pruned until the blobs the
	// rest reference fit. The newest checkpoint is always kept. Default 1 GiB.
	MaxStoreBytes int64
	// MaxEntries: a tree with more files, directories and links than this
	// is not checkpointed at all (Take fails with [ErrTooManyEntries]), so
	// a session started in a home directory does not copy it. Default
	// 50,000.
	MaxEntries int
}

// ErrTooManyEntries is matched (errors.Is) by the error of a Take over a
// tree larger than Limits.MaxEntries.
var ErrTooManyEntries = errors.New("too many entries to checkpoint")

func (l Limits) withDefaults() Limits {
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = 10 << 20
	}
	if l.MaxCheckpoints <= 0 {
		l.MaxCheckpoints = 100
	}
	if l.MaxStoreBytes <= 0 {
		l.MaxStoreBytes = 1 << 30
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = 50000
	}
	return l
}

// Store is the checkpoints of one workspace. Its methods are safe for
// concurrent use within a process; two processes may share a store
// (checkpoint numbers are claimed with an exclusive link), but the stat
// cache is then last-writer-wins, which costs only re-hashing.
type Store struct {
	root   string // workspace, absolute
	dir    string // store directory
	limits Limits

	mu    sync.Mutex // serialises Take, Plan, Apply and pruning; guards index
	index *refIndex  // nil until the first prune
	cache *statCache // the stat cache this Store last wrote
}

// Dir returns the store directory for workspace under stateDir:
// stateDir/checkpoints/<first 16 hex of sha256(abs workspace)>.
func Dir(stateDir, workspace string) (string, error) {
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return "", fmt.Errorf("checkpoints: workspace %q: %w", workspace, err)
	}
	sum := sha256.Sum256([]byte(filepath.Clean(abs)))
	return filepath.Join(stateDir, "checkpoints", hex.EncodeToString(sum[:8])), nil
}

// Open opens (creating) the store of workspace under stateDir.
func Open(stateDir, workspace string, limits Limits) (*Store, error) {
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return nil, fmt.Errorf("checkpoints: workspace %q: %w", workspace, err)
	}
	dir, err := Dir(stateDir, abs)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "blobs"), 0o700); err != nil {
		return nil, fmt.Errorf("checkpoints: store %s: %w", dir, err)
	}
	return &Store{root: abs, dir: dir, limits: limits.withDefaults()}, nil
}

// Workspace returns the absolute workspace path.
func (s *Store) Workspace() string { return s.root }

func (s *Store) blobPath(sum string) string {
	return filepath.Join(s.dir, "blobs", sum[:2], sum[2:])
}

// writeAtomic writes data to path through a temporary file in the same
// directory, synced and renamed, mode 0600.
func writeAtomic(path string, data []byte) error { return writeFile(path, data, true) }

// writeFile writes data to path through a temporary file in the same
// directory, renamed, mode 0600; synced first when sync is set. Blobs are
// not synced: one fsync per file made a first checkpoint of a thousand
// files take seconds, and a blob a crash tore is caught by its sha256
// when read (the restore of that path fails by name), while manifests,
// which say what a checkpoint holds, are synced.
func writeFile(path string, data []byte, sync bool) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if sync {
		if err := tmp.Sync(); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// putBlob stores data under its sha256 unless present and returns the sum.
func (s *Store) putBlob(data []byte) (string, error) {
	raw := sha256.Sum256(data)
	sum := hex.EncodeToString(raw[:])
	p := s.blobPath(sum)
	if _, err := os.Stat(p); err == nil {
		return sum, nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", err
	}
	return sum, writeFile(p, data, false)
}

// readBlob returns the content stored under sum, checking the sum.
func (s *Store) readBlob(sum string) ([]byte, error) {
	if len(sum) != 64 {
		return nil, fmt.Errorf("checkpoints: bad blob id %q", sum)
	}
	data, err := os.ReadFile(s.blobPath(sum))
	if err != nil {
		return nil, fmt.Errorf("checkpoints: blob %s: %w", sum, err)
	}
	if got := sha256.Sum256(data); hex.EncodeToString(got[:]) != sum {
		return nil, fmt.Errorf("checkpoints: blob %s: content does not match its sum", sum)
	}
	return data, nil
}

func manifestName(id int) string { return fmt.Sprintf("ckpt-%06d.json", id) }

// save writes c under the next free number (claimed with os.Link, which
// fails when another writer took it) and sets c.ID.
func (s *Store) save(c *Checkpoint) error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	next := 1
	if len(ids) > 0 {
		next = ids[len(ids)-1] + 1
	}
	for ; ; next++ {
		c.ID = next
		data, err := json.Marshal(c)
		if err != nil {
			return err
		}
		tmp := filepath.Join(s.dir, ".tmp-"+manifestName(next))
		if err := writeAtomic(tmp, data); err != nil {
			return fmt.Errorf("checkpoints: save: %w", err)
		}
		err = os.Link(tmp, filepath.Join(s.dir, manifestName(next)))
		os.Remove(tmp)
		if err == nil {
			return nil
		}
		if !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("checkpoints: save: %w", err)
		}
	}
}

// ids returns the checkpoint numbers present, ascending.
func (s *Store) ids() ([]int, error) {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoints: %w", err)
	}
	var ids []int
	for _, e := range ents {
		var id int
		if n, _ := fmt.Sscanf(e.Name(), "ckpt-%06d.json", &id); n == 1 && strings.HasSuffix(e.Name(), ".json") {
			ids = append(ids, id)
		}
	}
	sort.Ints(ids)
	return ids, nil
}

// Get reads checkpoint id.
func (s *Store) Get(id int) (*Checkpoint, error) {
	p := filepath.Join(s.dir, manifestName(id))
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("checkpoints: checkpoint %d: %w", id, err)
	}
	var c Checkpoint
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("checkpoints: %s: %w", p, err)
	}
	return &c, nil
}

// List returns every checkpoint, oldest first.
func (s *Store) List() ([]*Checkpoint, error) {
	ids, err := s.ids()
	if err != nil {
		return nil, err
	}
	out := make([]*Checkpoint, 0, len(ids))
	for _, id := range ids {
		c, err := s.Get(id)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func sumOf(data []byte) string {
	raw := sha256.Sum256(data)
	return hex.EncodeToString(raw[:])
}

// haveBlobLocked reports whether blob sum is stored: known from the
// reference index when a checkpoint on disk holds it, else by a stat.
func (s *Store) haveBlobLocked(sum string) bool {
	if s.index != nil && s.index.refs[sum] > 0 {
		return true
	}
	_, err := os.Stat(s.blobPath(sum))
	return err == nil
}

// Content returns the bytes a file entry of a checkpoint recorded (checked
// against its sum); an entry that is not a file has none.
func (s *Store) Content(e Entry) ([]byte, error) {
	if e.Kind != KindFile {
		return nil, fmt.Errorf("checkpoints: a %s entry has no content", e.Kind)
	}
	return s.readBlob(e.Blob)
}

package checkpoints

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// refIndex counts, for the checkpoints on disk, how many reference each
// blob, so that pruning reads only the manifests it drops. It is rebuilt
// from disk (with a full blob sweep) whenever the checkpoints on disk are
// not the ones it counted: another process wrote or pruned.
type refIndex struct {
	ids   []int
	refs  map[string]int
	size  map[string]int64
	total int64 // bytes of the distinct blobs referenced
}

func (x *refIndex) add(c *Checkpoint) {
	x.ids = append(x.ids, c.ID)
	for _, e := range c.Entries {
		if e.Kind != KindFile {
			continue
		}
		if x.refs[e.Blob] == 0 {
			x.size[e.Blob] = e.Size
			x.total += e.Size
		}
		x.refs[e.Blob]++
	}
}

// remove uncounts c and returns the blobs no checkpoint references now.
func (x *refIndex) remove(c *Checkpoint) []string {
	x.ids = slices.DeleteFunc(x.ids, func(id int) bool { return id == c.ID })
	var dead []string
	for _, e := range c.Entries {
		if e.Kind != KindFile || x.refs[e.Blob] == 0 {
			continue
		}
		if x.refs[e.Blob]--; x.refs[e.Blob] == 0 {
			x.total -= x.size[e.Blob]
			delete(x.refs, e.Blob)
			delete(x.size, e.Blob)
			dead = append(dead, e.Blob)
		}
	}
	return dead
}

// syncIndexLocked makes s.index count exactly the checkpoints in ids;
// just is the checkpoint Take saved, counted without re-reading it.
func (s *Store) syncIndexLocked(ids []int, just *Checkpoint) error {
	if s.index != nil && just != nil && slices.Equal(append(slices.Clone(s.index.ids), just.ID), ids) {
		s.index.add(just)
		return nil
	}
	x := &refIndex{refs: map[string]int{}, size: map[string]int64{}}
	for _, id := range ids {
		c, err := s.Get(id)
		if err != nil {
			return err
		}
		x.add(c)
	}
	s.index = x
	return s.sweepLocked(x)
}

// pruneLocked drops the oldest checkpoints beyond MaxCheckpoints, then the
// oldest until the blobs the rest reference fit in MaxStoreBytes (the
// newest always stays), deleting the blobs they alone referenced.
func (s *Store) pruneLocked(just *Checkpoint) error {
	ids, err := s.ids()
	if err != nil {
		return err
	}
	if err := s.syncIndexLocked(ids, just); err != nil {
		return err
	}
	x := s.index
	for len(x.ids) > s.limits.MaxCheckpoints || (len(x.ids) > 1 && x.total > s.limits.MaxStoreBytes) {
		if err := s.dropLocked(x.ids[0]); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) dropLocked(id int) error {
	c, err := s.Get(id)
	if err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(s.dir, manifestName(id))); err != nil {
		return fmt.Errorf("checkpoints: prune: %w", err)
	}
	for _, sum := range s.index.remove(c) {
		_ = os.Remove(s.blobPath(sum)) // best effort: a leftover blob only costs space
	}
	return nil
}

// sweepAge: an unreferenced blob younger than this is kept by a sweep.
const sweepAge = time.Hour

// sweepLocked deletes the blobs x does not reference (left by a crash or
// by another process's pruning).
func (s *Store) sweepLocked(x *refIndex) error {
	blobs := filepath.Join(s.dir, "blobs")
	fans, err := os.ReadDir(blobs)
	if err != nil {
		return fmt.Errorf("checkpoints: prune: %w", err)
	}
	for _, fan := range fans {
		ents, err := os.ReadDir(filepath.Join(blobs, fan.Name()))
		if err != nil {
			continue
		}
		for _, e := range ents {
			if x.refs[fan.Name()+e.Name()] != 0 || strings.HasPrefix(e.Name(), ".tmp-") {
				continue
			}
			// A young blob may belong to a checkpoint another process is
			// about to save.
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > sweepAge {
				_ = os.Remove(filepath.Join(blobs, fan.Name(), e.Name())) // best effort, as in dropLocked
			}
		}
	}
	return nil
}

package checkpoints

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// pruneLocked drops the oldest checkpoints beyond MaxCheckpoints, then
// the oldest until the blobs the rest reference fit in MaxStoreBytes (the
// newest always stays), then deletes blobs no checkpoint references.
func (s *Store) pruneLocked() error {
	all, err := s.List()
	if err != nil {
		return err
	}
	for len(all) > s.limits.MaxCheckpoints {
		if err := os.Remove(filepath.Join(s.dir, manifestName(all[0].ID))); err != nil {
			return fmt.Errorf("checkpoints: prune: %w", err)
		}
		all = all[1:]
	}
	for len(all) > 1 && referencedBytes(all) > s.limits.MaxStoreBytes {
		if err := os.Remove(filepath.Join(s.dir, manifestName(all[0].ID))); err != nil {
			return fmt.Errorf("checkpoints: prune: %w", err)
		}
		all = all[1:]
	}
	return s.collectLocked(all)
}

// referencedBytes is the size of the distinct blobs cs reference.
func referencedBytes(cs []*Checkpoint) int64 {
	seen := map[string]bool{}
	var n int64
	for _, c := range cs {
		for _, e := range c.Entries {
			if e.Kind == KindFile && !seen[e.Blob] {
				seen[e.Blob] = true
				n += e.Size
			}
		}
	}
	return n
}

// collectLocked deletes the blobs that no checkpoint in keep references.
func (s *Store) collectLocked(keep []*Checkpoint) error {
	live := map[string]bool{}
	for _, c := range keep {
		for _, e := range c.Entries {
			if e.Kind == KindFile {
				live[e.Blob] = true
			}
		}
	}
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
			if !live[fan.Name()+e.Name()] && !strings.HasPrefix(e.Name(), ".tmp-") {
				_ = os.Remove(filepath.Join(blobs, fan.Name(), e.Name())) // best effort: a leftover blob only costs space
			}
		}
	}
	return nil
}

package toolfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// errExists reports that a create-if-absent write found the target present.
var errExists = errors.New("target exists")

// writeAtomic publishes content at path through a private temporary file in the
// same directory: write, fsync, chmod to mode, then rename over the target (or,
// with createOnly, hard-link it into place, which fails with errExists when the
// target appeared meanwhile). Readers see the old or the new content, never a
// mix. Missing parent directories are created with mode 0755.
func writeAtomic(path string, content []byte, mode fs.FileMode, createOnly bool) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".harness-write-*")
	if err != nil {
		return err
	}
	tmpPath := tmp.Name()
	defer os.Remove(tmpPath) // no-op after a rename; cleans up after a link or a failure
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if createOnly {
		if err := os.Link(tmpPath, path); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return errExists
			}
			return fmt.Errorf("publish: %w", err)
		}
		return nil
	}
	return os.Rename(tmpPath, path)
}

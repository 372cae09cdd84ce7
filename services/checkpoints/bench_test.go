package checkpoints_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dshgo/harness/services/checkpoints"
)

// BenchmarkCheckpointIncremental measures a checkpoint of a 10,000-file
// tree (100 directories of 100 files, 1 KiB each) after a first one, with
// three files changed in between: the steady state of a session.
func BenchmarkCheckpointIncremental(b *testing.B) {
	ws := b.TempDir()
	old := time.Now().Add(-time.Hour)
	body := make([]byte, 1024)
	for d := range 100 {
		dir := filepath.Join(ws, fmt.Sprintf("pkg%03d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			p := filepath.Join(dir, fmt.Sprintf("file%03d.go", f))
			copy(body, fmt.Sprintf("package pkg%03d // %d", d, f))
			if err := os.WriteFile(p, body, 0o644); err != nil {
				b.Fatal(err)
			}
			if err := os.Chtimes(p, old, old); err != nil {
				b.Fatal(err)
			}
		}
	}
	s, err := checkpoints.Open(b.TempDir(), ws, checkpoints.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Take(ctx, checkpoints.Meta{Reason: "prompt"}); err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		for k := range 3 {
			p := filepath.Join(ws, fmt.Sprintf("pkg%03d", (i+k)%100), "file000.go")
			if err := os.WriteFile(p, fmt.Appendf(nil, "edit %d", i), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		i++
		if _, err := s.Take(ctx, checkpoints.Meta{Reason: "turn-end"}); err != nil {
			b.Fatal(err)
		}
	}
}

package checkpoints_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshgo/harness/services/checkpoints"
)

// TestSidesAndDiffOfAChangedFile: a file edited after a checkpoint has
// both sides as text, a diff from then to now whose stat counts the
// changed lines only (not the "---"/"+++" header, nor a removed line that
// itself starts with "--"), and a new file has a nil "then".
func TestSidesAndDiffOfAChangedFile(t *testing.T) {
	ws := t.TempDir()
	writeTree(t, ws, tree{"a.txt": "one\n-- two\nthree\n", "bin": "x\x00y"})
	s, err := checkpoints.Open(t.TempDir(), ws, checkpoints.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Take(context.Background(), checkpoints.Meta{Session: "s", Reason: "prompt"})
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, ws, tree{"a.txt": "one\nthree\nfour\n", "new.txt": "hello\n"})
	then, now, ok := s.Sides(c, "a.txt")
	if !ok || string(then) != "one\n-- two\nthree\n" || string(now) != "one\nthree\nfour\n" {
		t.Fatalf("Sides(a.txt) = %q, %q, %v", then, now, ok)
	}
	d := checkpoints.UnifiedDiff("then/a.txt", "now/a.txt", then, now, 0)
	if add, del := checkpoints.DiffStat(d); add != 1 || del != 1 {
		t.Errorf("DiffStat = +%d -%d, want +1 -1, of\n%s", add, del, d)
	}
	if then, now, ok := s.Sides(c, "new.txt"); !ok || then != nil || string(now) != "hello\n" {
		t.Errorf("Sides(new.txt) = %q, %q, %v", then, now, ok)
	}
	if _, _, ok := s.Sides(c, "bin"); ok {
		t.Error("Sides(bin) is ok for a binary file")
	}
	if err := os.Remove(filepath.Join(ws, "a.txt")); err != nil {
		t.Fatal(err)
	}
	if then, now, ok := s.Sides(c, "a.txt"); !ok || now != nil || len(then) == 0 {
		t.Errorf("Sides(deleted a.txt) = %q, %q, %v", then, now, ok)
	}
	if got := checkpoints.UnifiedDiff("a", "b", []byte("x\n"), []byte("x\n"), 0); got != "" {
		t.Errorf("UnifiedDiff of equal texts = %q", got)
	}
}

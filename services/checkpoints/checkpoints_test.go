package checkpoints_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dshgo/harness/services/checkpoints"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// tree is path → "content" (a file 0644), "content@0755" (a mode),
// "->target" (a symlink) or "/" (a directory).
type tree map[string]string

func writeTree(t testing.TB, root string, tr tree) {
	t.Helper()
	for p, v := range tr {
		abs := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case v == "/":
			if err := os.MkdirAll(abs, 0o755); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(v, "->"):
			if err := os.Symlink(v[2:], abs); err != nil {
				t.Fatal(err)
			}
		default:
			content, mode := v, os.FileMode(0o644)
			if i := strings.LastIndex(v, "@0"); i >= 0 {
				var m uint32
				fmt.Sscanf(v[i+1:], "%o", &m)
				content, mode = v[:i], os.FileMode(m)
			}
			if err := os.WriteFile(abs, []byte(content), mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(abs, mode); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// readTree is the inverse of writeTree, skipping .git.
func readTree(t testing.TB, root string) tree {
	t.Helper()
	out := tree{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case info.IsDir():
			out[rel] = "/"
		case info.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "->" + target
		default:
			data, _ := os.ReadFile(p)
			out[rel] = fmt.Sprintf("%s@%04o", data, info.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func open(t testing.TB, ws string, l checkpoints.Limits) *checkpoints.Store {
	t.Helper()
	s, err := checkpoints.Open(t.TempDir(), ws, l)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func take(t testing.TB, s *checkpoints.Store, reason string) *checkpoints.Checkpoint {
	t.Helper()
	c, err := s.Take(context.Background(), checkpoints.Meta{Reason: reason})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func rewind(t testing.TB, s *checkpoints.Store, to, since *checkpoints.Checkpoint, force bool) *checkpoints.Plan {
	t.Helper()
	p, err := s.Plan(context.Background(), to, since)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(context.Background(), p, force); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRewindRestoresCreateModifyDeleteRenameModeAndSymlinksExactly(t *testing.T) {
	ws := t.TempDir()
	writeTree(t, ws, tree{
		"main.go":      "package main@0644",
		"run.sh":       "#!/bin/sh@0755",
		"old/name.txt": "moved later@0600",
		"link":         "->main.go",
		"dirlink":      "->old",
		"gone/x.txt":   "deleted later@0644",
		".git/HEAD":    "ref: refs/heads/main@0644",
	})
	s := open(t, ws, checkpoints.Limits{})
	before := readTree(t, ws)
	c1 := take(t, s, "prompt")

	// The agent's turn: edit, chmod, create, delete, rename, relink, and a
	// file turned into a directory.
	os.WriteFile(filepath.Join(ws, "main.go"), []byte("package broken"), 0o644)
	os.Chmod(filepath.Join(ws, "run.sh"), 0o644)
	writeTree(t, ws, tree{"new/dir/made.txt": "new@0644"})
	os.RemoveAll(filepath.Join(ws, "gone"))
	os.Rename(filepath.Join(ws, "old"), filepath.Join(ws, "renamed"))
	os.Remove(filepath.Join(ws, "link"))
	os.Symlink("run.sh", filepath.Join(ws, "link"))
	os.Remove(filepath.Join(ws, "dirlink"))
	os.Mkdir(filepath.Join(ws, "dirlink"), 0o755)
	os.WriteFile(filepath.Join(ws, ".git", "HEAD"), []byte("changed"), 0o644)
	c2 := take(t, s, "turn-end")

	p := rewind(t, s, c1, c2, false)
	if r := p.Refused(); len(r) != 0 {
		t.Fatalf("refused %v, want none", r)
	}
	after := readTree(t, ws)
	before[".git"] = "/" // .git is never touched: its change stays
	after[".git"] = "/"
	if !reflect.DeepEqual(after, before) {
		t.Fatalf("after rewind:\n%v\nwant:\n%v", after, before)
	}
	if data, _ := os.ReadFile(filepath.Join(ws, ".git", "HEAD")); string(data) != "changed" {
		t.Fatalf(".git/HEAD = %q: rewind touched .git", data)
	}
}

func TestUserEditSinceTurnEndIsRefusedUnlessForced(t *testing.T) {
	ws := t.TempDir()
	writeTree(t, ws, tree{"a.txt": "one", "b.txt": "one"})
	s := open(t, ws, checkpoints.Limits{})
	c1 := take(t, s, "prompt")
	writeTree(t, ws, tree{"c.txt": "agent"})
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("agent"), 0o644)
	os.WriteFile(filepath.Join(ws, "b.txt"), []byte("agent"), 0o644)
	c2 := take(t, s, "turn-end")
	// The user edits a.txt and creates d.txt after the turn.
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("user"), 0o644)
	writeTree(t, ws, tree{"d.txt": "user"})

	p := rewind(t, s, c1, c2, false)
	if got, want := p.Refused(), []string{"a.txt", "d.txt"}; !slices.Equal(got, want) {
		t.Fatalf("refused %v, want %v", got, want)
	}
	got := readTree(t, ws)
	want := tree{"a.txt": "user@0644", "b.txt": "one@0644", "d.txt": "user@0644"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after unforced rewind %v, want %v", got, want)
	}
	rewind(t, s, c1, c2, true)
	if got, want := readTree(t, ws), (tree{"a.txt": "one@0644", "b.txt": "one@0644"}); !reflect.DeepEqual(got, want) {
		t.Fatalf("after forced rewind %v, want %v", got, want)
	}
}

func TestIgnoredAndOversizedFilesAreSkippedListedAndLeftAlone(t *testing.T) {
	ws := t.TempDir()
	writeTree(t, ws, tree{
		".gitignore":    "*.log\nbuild/\n",
		"app.log":       "log",
		"build/out.bin": "bin",
		"big.dat":       strings.Repeat("x", 100),
		"ok.txt":        "ok",
	})
	s := open(t, ws, checkpoints.Limits{MaxFileBytes: 50})
	c1 := take(t, s, "prompt")
	var skipped []string
	for _, sk := range c1.Skipped {
		skipped = append(skipped, sk.Path+": "+sk.Reason)
	}
	want := []string{"app.log: ignored", "big.dat: too large (100 bytes, limit 50)", "build: ignored"}
	if !slices.Equal(skipped, want) {
		t.Fatalf("skipped %q, want %q", skipped, want)
	}
	os.WriteFile(filepath.Join(ws, "app.log"), []byte("log2"), 0o644)
	os.WriteFile(filepath.Join(ws, "big.dat"), []byte(strings.Repeat("y", 100)), 0o644)
	os.WriteFile(filepath.Join(ws, "ok.txt"), []byte("changed"), 0o644)
	c2 := take(t, s, "turn-end")
	rewind(t, s, c1, c2, false)
	got := readTree(t, ws)
	if got["ok.txt"] != "ok@0644" || got["app.log"] != "log2@0644" || got["big.dat"] != strings.Repeat("y", 100)+"@0644" {
		t.Fatalf("after rewind %v: want ok.txt restored, app.log and big.dat left alone", got)
	}
}

func TestIncrementalTakeSeesAChangeWithTheSameSizeAndMTime(t *testing.T) {
	ws := t.TempDir()
	writeTree(t, ws, tree{"a.txt": "aaaa"})
	old := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(ws, "a.txt"), old, old)
	s := open(t, ws, checkpoints.Limits{})
	c1 := take(t, s, "prompt")
	// Same size, mtime put back: only the inode/ctime tell.
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("bbbb"), 0o644)
	os.Chtimes(filepath.Join(ws, "a.txt"), old, old)
	c2 := take(t, s, "turn-end")
	if c1.Entries["a.txt"].Blob == c2.Entries["a.txt"].Blob {
		t.Fatal("second checkpoint reused the stale blob of a.txt")
	}
}

func TestPruningKeepsTheNewestByCountAndSizeAndDropsUnreferencedBlobs(t *testing.T) {
	for _, c := range []struct {
		name   string
		limits checkpoints.Limits
		kept   []int
		blobs  int
	}{
		{"count", checkpoints.Limits{MaxCheckpoints: 3}, []int{4, 5, 6}, 3},
		{"size", checkpoints.Limits{MaxCheckpoints: 3, MaxStoreBytes: 250}, []int{6}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws, state := t.TempDir(), t.TempDir()
			s, err := checkpoints.Open(state, ws, c.limits)
			if err != nil {
				t.Fatal(err)
			}
			// Each checkpoint holds one 100-byte file, rewritten each time.
			for i := range 6 {
				writeTree(t, ws, tree{"f.txt": strings.Repeat(fmt.Sprint(i), 100)})
				os.Remove(filepath.Join(ws, "f.txt"))
				writeTree(t, ws, tree{"f.txt": strings.Repeat(fmt.Sprint(i), 100+100*(i/5))})
				take(t, s, "prompt")
			}
			all, err := s.List()
			if err != nil {
				t.Fatal(err)
			}
			var ids []int
			for _, ck := range all {
				ids = append(ids, ck.ID)
			}
			if !slices.Equal(ids, c.kept) {
				t.Fatalf("kept %v, want %v", ids, c.kept)
			}
			dir, _ := checkpoints.Dir(state, ws)
			blobs, _ := filepath.Glob(filepath.Join(dir, "blobs", "*", "*"))
			if len(blobs) != c.blobs {
				t.Fatalf("%d blobs left, want %d", len(blobs), c.blobs)
			}
		})
	}
}

func TestACorruptBlobFailsTheRestoreOfThatPathAndWritesNothingThere(t *testing.T) {
	ws, state := t.TempDir(), t.TempDir()
	writeTree(t, ws, tree{"a.txt": "original"})
	s, err := checkpoints.Open(state, ws, checkpoints.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	c1 := take(t, s, "prompt")
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("agent"), 0o644)
	c2 := take(t, s, "turn-end")
	dir, _ := checkpoints.Dir(state, ws)
	sum := c1.Entries["a.txt"].Blob
	if err := os.WriteFile(filepath.Join(dir, "blobs", sum[:2], sum[2:]), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := s.Plan(context.Background(), c1, c2)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Apply(context.Background(), p, false)
	if err == nil || !strings.Contains(err.Error(), "restore a.txt") || !strings.Contains(err.Error(), "does not match its sum") {
		t.Fatalf("Apply error = %v, want one naming a.txt and the sum mismatch", err)
	}
	if data, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(data) != "agent" {
		t.Fatalf("a.txt = %q after a failed restore, want it untouched", data)
	}
}

// A tree with more entries than MaxEntries (ignored paths not counted) is
// not checkpointed at all: Take fails with ErrTooManyEntries, naming the
// limit, and stores nothing; within the limit it works.
func TestATreeOverMaxEntriesIsNotCheckpointed(t *testing.T) {
	ws := t.TempDir()
	writeTree(t, ws, tree{".gitignore": "node_modules/\n", "a.txt": "a", "b.txt": "b", "c/d.txt": "d", "node_modules/x/y.js": "y", "node_modules/x/z.js": "z"})
	s := open(t, ws, checkpoints.Limits{MaxEntries: 4})
	if _, err := s.Take(context.Background(), checkpoints.Meta{Reason: "prompt"}); !errors.Is(err, checkpoints.ErrTooManyEntries) || !strings.Contains(err.Error(), "more than 4") {
		t.Fatalf("Take over the limit: %v", err)
	}
	if l, err := s.List(); err != nil || len(l) != 0 {
		t.Fatalf("checkpoints after the refused Take: %d, %v", len(l), err)
	}
	s = open(t, ws, checkpoints.Limits{MaxEntries: 5}) // .gitignore, a, b, c, c/d
	take(t, s, "prompt")
}

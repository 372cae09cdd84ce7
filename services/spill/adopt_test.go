package spill

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A subprocess stream spill is taken over by the store without being read
// into memory: it moves into the owner's directory, private, and is deleted
// with the store's other files (bug case B25).
func TestAdoptFileMovesIntoTheOwnerDirectory(t *testing.T) {
	s := newStore(t, LocalOptions{})
	srcDir := t.TempDir()
	content := strings.Repeat("line\n", 10_000)
	for name, dir := range map[string]string{"same filesystem": srcDir, "other filesystem": "/dev/shm"} {
		t.Run(name, func(t *testing.T) {
			if _, err := os.Stat(dir); err != nil {
				t.Skip(dir, err)
			}
			src := filepath.Join(dir, "harness-test-adopt-stdout.log")
			if err := os.WriteFile(src, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(src)
			ref, err := s.AdoptFile(context.Background(), toolReq("sess-1", "bash-stdout.log", ""), src)
			if err != nil {
				t.Fatal(err)
			}
			loc := string(ref.Locator)
			if filepath.Dir(loc) != s.OwnerDir("sess-1") || !regexp.MustCompile(`^[0-9a-f]{12}-bash-stdout\.log$`).MatchString(filepath.Base(loc)) {
				t.Errorf("locator %s", loc)
			}
			if ref.Bytes != int64(len(content)) || ref.Hint != Hint {
				t.Errorf("ref = %+v", ref)
			}
			fi, err := os.Stat(loc)
			if err != nil || fi.Mode().Perm() != FileMode {
				t.Fatalf("adopted file: %v %v", fi, err)
			}
			if got, _ := os.ReadFile(loc); string(got) != content {
				t.Error("content changed")
			}
			if _, err := os.Stat(src); !os.IsNotExist(err) {
				t.Errorf("source still there: %v", err)
			}
		})
	}
	dir := s.OwnerDir("sess-1")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("owner directory survived Close: %v", err)
	}
}

func TestAdoptFileRefusesSymlinksAndDirectories(t *testing.T) {
	s := newStore(t, LocalOptions{Keep: true})
	dir := t.TempDir()
	target := filepath.Join(dir, "secret")
	os.WriteFile(target, []byte("x"), 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	for _, p := range []string{link, dir, filepath.Join(dir, "missing")} {
		if _, err := s.AdoptFile(context.Background(), toolReq("s", "x.log", ""), p); err == nil {
			t.Errorf("adopted %s", p)
		}
	}
	if _, err := os.Lstat(link); err != nil {
		t.Error("the refused symlink was moved")
	}
	if entries, _ := os.ReadDir(s.OwnerDir("s")); len(entries) != 0 {
		t.Errorf("owner directory holds %d entries", len(entries))
	}
}

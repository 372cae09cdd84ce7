package sessions

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Create on a file system without hard links (linkFile fails with EPERM,
// as on FAT or many FUSE mounts) creates the log in place: it has its
// header, is locked, and reopens like any other.
//
// Serial: it replaces the package variable linkFile.
func TestCreateWithoutHardLinks(t *testing.T) {
	defer func(l func(string, string) error) { linkFile = l }(linkFile)
	linkFile = func(string, string) error { return &os.LinkError{Op: "link", Err: syscall.EPERM} }
	ctx := context.Background()
	dir := t.TempDir()
	s := New(NewJSONL(dir))
	w, err := s.Create(ctx, Header{ID: "nolinks", Cwd: "/"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append(ctx, Entry{Type: "user", Fields: []byte(`{"turn":1}`)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := New(NewJSONL(dir)).Open(ctx, "nolinks"); err == nil {
		t.Fatal("a second open of the created log was not refused")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w2, recs, err := s.Open(ctx, "nolinks")
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if len(recs) != 2 || recs[0].Type != TypeHeader || recs[1].Seq != 2 {
		t.Fatalf("records %+v", recs)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("sessions dir holds %d entries, want the log alone", len(ents))
	}
}

// Temporary files of a create that was killed midway are removed by the
// next create once they are old; a fresh one (a create in progress) stays.
func TestCreateSweepsStaleTemps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stale, fresh := filepath.Join(dir, ".old.123.tmp"), filepath.Join(dir, ".new.456.tmp")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleTemp)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	w, err := New(NewJSONL(dir)).Create(context.Background(), Header{ID: "sweeper", Cwd: "/"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temp file still there: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("fresh temp file removed: %v", err)
	}
}

// A child process started while a session log was open shares the log's
// open file description, and with it the lock, until it execs (here:
// until it exits, as ExtraFiles keeps the descriptor across exec). Closing
// the session and opening it again at once waits for that instead of
// failing "already open in this harness process".
func TestReopenWaitsForAForkedChildsCopyOfTheLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := NewJSONL(t.TempDir())
	h, err := p.Create(ctx, Header{ID: "forked"}, Record{Seq: 1, Type: "session", Data: []byte(`{"type":"session","id":"forked"}`)})
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command("sleep", "0.3")
	child.ExtraFiles = []*os.File{h.(*jsonlHandle).f}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Wait()
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	h2, _, err := p.Open(ctx, "forked")
	if err != nil {
		t.Fatalf("reopen while a child holds a copy of the closed log: %v", err)
	}
	_ = h2.Close()
}

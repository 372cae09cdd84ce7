package agent

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// CreateJournal on a file system without hard links (linkFile fails with
// EPERM, as on FAT or many FUSE mounts) creates the log in place: it has
// its header, is locked, and resumes like any other.
func TestCreateJournalWithoutHardLinks(t *testing.T) {
	defer func(l func(string, string) error) { linkFile = l }(linkFile)
	linkFile = func(string, string) error { return &os.LinkError{Op: "link", Err: syscall.EPERM} }
	state := t.TempDir()
	j, err := CreateJournal(state, Record{ID: "nolinks", Cwd: "/"})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Append(Record{Type: RecordUser, Turn: 1}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := OpenJournal(state, "nolinks"); err == nil {
		t.Fatal("a second open of the created log was not refused")
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	j2, recs, err := OpenJournal(state, "nolinks")
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	if len(recs) != 2 || recs[0].Type != RecordSession || recs[1].Seq != 2 {
		t.Fatalf("records %+v", recs)
	}
	if ents, _ := os.ReadDir(SessionsDir(state)); len(ents) != 1 {
		t.Fatalf("sessions dir holds %d entries, want the log alone", len(ents))
	}
}

// Temporary files of a create that was killed midway are removed by the
// next create once they are old; a fresh one (a create in progress) stays.
func TestCreateJournalSweepsStaleTemps(t *testing.T) {
	state := t.TempDir()
	dir := SessionsDir(state)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
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
	j, err := CreateJournal(state, Record{ID: "sweeper", Cwd: "/"})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale temp file still there: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("fresh temp file removed: %v", err)
	}
}

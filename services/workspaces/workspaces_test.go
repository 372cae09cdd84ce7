package workspaces_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshgo/harness/services/workspaces"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestAddIsStableCanonicalAndPersisted(t *testing.T) {
	state, repo := t.TempDir(), t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(repo, link); err != nil {
		t.Fatal(err)
	}
	s, err := workspaces.New(state)
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Add(repo, "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Add(link+"/.", "My repo")
	if err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(repo)
	if a.ID != b.ID || b.Path != real || b.Title != "My repo" || a.Title != filepath.Base(real) {
		t.Fatalf("a=%+v b=%+v", a, b)
	}
	if len(s.List()) != 1 {
		t.Fatalf("list %+v", s.List())
	}
	st, err := os.Stat(s.File())
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("record %v %v", st.Mode(), err)
	}
	again, err := workspaces.New(state)
	if err != nil {
		t.Fatal(err)
	}
	if w, err := again.Get(a.ID); err != nil || w.Title != "My repo" || w.Path != real {
		t.Fatalf("reloaded %+v %v", w, err)
	}
	if _, err := s.Add(filepath.Join(repo, "missing"), ""); err == nil {
		t.Fatal("a missing directory was added")
	}
}

func TestLastUsedFirstRenameRemove(t *testing.T) {
	s, _ := workspaces.New(t.TempDir())
	one, _ := s.Add(t.TempDir(), "one")
	two, _ := s.Add(t.TempDir(), "two")
	if l := s.List(); l[0].ID != two.ID {
		t.Fatalf("first %q, want two", l[0].Title)
	}
	if err := s.Touch(one.ID); err != nil {
		t.Fatal(err)
	}
	if l := s.List(); l[0].ID != one.ID {
		t.Fatalf("after touch first %q, want one", l[0].Title)
	}
	if err := s.Rename(one.ID, "line\nbreak"); err == nil {
		t.Fatal("a two-line title was accepted")
	}
	if err := s.Rename(one.ID, "uno"); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(two.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(two.ID); !errors.Is(err, workspaces.ErrNotFound) {
		t.Fatalf("second remove: %v", err)
	}
	if l := s.List(); len(l) != 1 || l[0].Title != "uno" {
		t.Fatalf("list %+v", l)
	}
}

func TestSessionsAreValidatedAgainstTheirCwd(t *testing.T) {
	s, _ := workspaces.New(t.TempDir())
	repo, elsewhere := t.TempDir(), t.TempDir()
	w, _ := s.Add(repo, "")
	if err := s.AddSession(w.ID, "s1", repo); err != nil {
		t.Fatal(err)
	}
	if err := s.AddSession(w.ID, "s2", elsewhere); !errors.Is(err, workspaces.ErrWrongWorkspace) {
		t.Fatalf("foreign session: %v", err)
	}
	_ = s.AddSession(w.ID, "s3", repo)
	cwds := map[string]string{"s1": repo, "s3": elsewhere} // s3's header says elsewhere now
	got, err := s.Validate(w.ID, func(id string) (string, bool) { c, ok := cwds[id]; return c, ok })
	if err != nil || len(got.Sessions) != 1 || got.Sessions[0] != "s1" {
		t.Fatalf("validated %+v %v", got.Sessions, err)
	}
	if err := s.RemoveSession(w.ID, "s1"); err != nil {
		t.Fatal(err)
	}
	if w, _ := s.Get(w.ID); len(w.Sessions) != 0 {
		t.Fatalf("sessions %v", w.Sessions)
	}
}

package spill

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newStore(t *testing.T, opts LocalOptions) *LocalStore {
	t.Helper()
	if opts.Root == "" {
		opts.Root = filepath.Join(t.TempDir(), "spill")
	}
	s, err := NewLocalStore(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func toolReq(session, name, content string) SaveRequest {
	return SaveRequest{
		Owner:         Owner{SessionID: session},
		Source:        Source{Kind: SourceTool, ToolName: "bash", CallID: "call_1", Label: "result"},
		SuggestedName: name,
		Content:       content,
	}
}

func TestSaveTextStoresExactBytes(t *testing.T) {
	s := newStore(t, LocalOptions{Keep: true})
	for _, tc := range []struct {
		name    string
		content string
		bytes   int64
	}{
		{"ascii", "hello\n", 6},
		{"multibyte", "héllo", 6},
		{"empty", "", 0},
		{"invalid utf8 and NUL", "a\xff\x00b\r\n", 6},
		{"large", strings.Repeat("0123456789", 200_000), 2_000_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref, err := s.SaveText(context.Background(), toolReq("s1", "bash.txt", tc.content))
			if err != nil {
				t.Fatal(err)
			}
			if ref.Bytes != tc.bytes {
				t.Errorf("Bytes = %d, want %d", ref.Bytes, tc.bytes)
			}
			if ref.Hint != Hint {
				t.Errorf("Hint = %q", ref.Hint)
			}
			got, err := os.ReadFile(string(ref.Locator))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.content {
				t.Errorf("stored content differs: %d bytes, want %d", len(got), len(tc.content))
			}
			if !filepath.IsAbs(string(ref.Locator)) {
				t.Errorf("locator %q is not absolute", ref.Locator)
			}
		})
	}
}

func TestOwnerDirModeIsRepaired(t *testing.T) {
	s := newStore(t, LocalOptions{Keep: true})
	dir := s.OwnerDir("s")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777)
	if _, err := s.SaveText(context.Background(), toolReq("s", "x", "y")); err != nil {
		t.Fatal(err)
	}
	di, _ := os.Lstat(dir)
	if di.Mode().Perm() != DirMode {
		t.Errorf("dir mode = %v, want 0700", di.Mode().Perm())
	}
}

func TestSuggestedNameCannotEscape(t *testing.T) {
	s := newStore(t, LocalOptions{Keep: true})
	for _, tc := range []struct{ suggested, suffix string }{
		{"../etc/passwd", "..~002Fetc~002Fpasswd"},
		{"/etc/passwd", "~002Fetc~002Fpasswd"},
		{"a/b", "a~002Fb"},
		{"..", "~002E~002E"},
		{".", "~002E"},
		{"", "~"},
		{"~x", "~007Ex"},
		{"a\\b\x00c", "a~005Cb~0000c"},
		{"web_fetch.txt", "web_fetch.txt"},
	} {
		t.Run(tc.suggested, func(t *testing.T) {
			ref, err := s.SaveText(context.Background(), toolReq("s", tc.suggested, "x"))
			if err != nil {
				t.Fatal(err)
			}
			loc := string(ref.Locator)
			if filepath.Dir(loc) != s.OwnerDir("s") {
				t.Fatalf("escaped the owner directory: %s", loc)
			}
			base := filepath.Base(loc)
			// Reference B2: <12 hex random>-<encodeSegment(suggestedName)>.
			if !regexp.MustCompile(`^[0-9a-f]{12}-`).MatchString(base) || base[13:] != tc.suffix {
				t.Errorf("name = %q, want <12 hex>-%s", base, tc.suffix)
			}
		})
	}
}

func TestLongSuggestedNameIsBounded(t *testing.T) {
	s := newStore(t, LocalOptions{Keep: true})
	ref, err := s.SaveText(context.Background(), toolReq("s", strings.Repeat("/", 300), "x"))
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Base(string(ref.Locator))
	if len(base) != 13+125 || !strings.HasSuffix(base, "~002F") {
		t.Errorf("bounded name = %q (%d bytes)", base, len(base))
	}
}

func TestEncodeSegment(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"abc-XYZ_0.9", "abc-XYZ_0.9"},
		{"", "~"},
		{".", "~002E"},
		{"..", "~002E~002E"},
		{"...", "..."},
		{"a b", "a~0020b"},
		{"é", "~00E9"},
		{"😀", "~D83D~DE00"},
	} {
		if got := EncodeSegment(tc.in); got != tc.want {
			t.Errorf("EncodeSegment(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSameNameGetsDistinctPaths(t *testing.T) {
	s := newStore(t, LocalOptions{Keep: true})
	seen := map[Locator]bool{}
	for range 20 {
		ref, err := s.SaveText(context.Background(), toolReq("s", "bash.txt", "x"))
		if err != nil {
			t.Fatal(err)
		}
		if seen[ref.Locator] {
			t.Fatalf("duplicate locator %s", ref.Locator)
		}
		seen[ref.Locator] = true
	}
}

func TestRootThatIsAFileFails(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, []byte("x"), 0o600)
	if _, err := NewLocalStore(LocalOptions{Root: file}); err == nil {
		t.Fatal("NewLocalStore on a file root succeeded")
	}
	// A root replaced by a file after start makes SaveText reject.
	s := newStore(t, LocalOptions{Keep: true})
	os.RemoveAll(s.Root())
	os.WriteFile(s.Root(), []byte("x"), 0o600)
	if _, err := s.SaveText(context.Background(), toolReq("s", "a", "b")); err == nil {
		t.Fatal("SaveText under a file root succeeded")
	}
}

// B25: a symlink planted at the owner directory is never followed.
func TestPlantedOwnerDirSymlinkIsRefused(t *testing.T) {
	s := newStore(t, LocalOptions{Keep: true})
	target := t.TempDir()
	if err := os.Symlink(target, s.OwnerDir("victim")); err != nil {
		t.Fatal(err)
	}
	_, err := s.SaveText(context.Background(), toolReq("victim", "bash.txt", "secret"))
	if !errors.Is(err, syscall.ELOOP) && !errors.Is(err, syscall.ENOTDIR) {
		t.Fatalf("err = %v, want ELOOP", err)
	}
	entries, _ := os.ReadDir(target)
	if len(entries) != 0 {
		t.Errorf("wrote through the symlink: %v", entries)
	}
}

func TestInvalidRequests(t *testing.T) {
	s := newStore(t, LocalOptions{Keep: true})
	for _, tc := range []struct {
		name string
		req  SaveRequest
		want string
	}{
		{"no owner", SaveRequest{Source: Source{Kind: SourceTool}}, "owner.sessionId: must be non-empty"},
		{"no kind", SaveRequest{Owner: Owner{SessionID: "s"}}, `source.kind: must be "tool" or "session-reference"`},
		{"bad kind", SaveRequest{Owner: Owner{SessionID: "s"}, Source: Source{Kind: "x"}}, `source.kind: unknown kind "x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.SaveText(context.Background(), tc.req)
			if !errors.Is(err, ErrInvalidRequest) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.SaveText(ctx, toolReq("s", "a", "b")); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled ctx: err = %v", err)
	}
	if _, err := NewLocalStore(LocalOptions{}); err == nil || !strings.Contains(err.Error(), "root") {
		t.Errorf("empty root: err = %v", err)
	}
	if _, err := NewLocalStore(LocalOptions{Root: t.TempDir(), MaxAge: -1}); err == nil || !strings.Contains(err.Error(), "maxAge") {
		t.Errorf("negative maxAge: err = %v", err)
	}
}

func TestSessionReferenceSource(t *testing.T) {
	s := newStore(t, LocalOptions{Keep: true})
	ref, err := s.SaveText(context.Background(), SaveRequest{
		Owner:         Owner{SessionID: "target"},
		Source:        Source{Kind: SourceSessionReference, SessionID: "captured", Label: "reference"},
		SuggestedName: "session.txt",
		Content:       "ctx",
	})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(string(ref.Locator)) != s.OwnerDir("target") {
		t.Errorf("session reference stored outside the owner (target) directory: %s", ref.Locator)
	}
}

func TestCleanupDeletesOnlyOldSpillFiles(t *testing.T) {
	s := newStore(t, LocalOptions{MaxAge: time.Hour, Keep: true})
	ctx := context.Background()
	now := time.Now()
	old, _ := s.SaveText(ctx, toolReq("a", "old.txt", "old"))
	fresh, _ := s.SaveText(ctx, toolReq("a", "fresh.txt", "fresh"))
	oldOnly, _ := s.SaveText(ctx, toolReq("b", "old.txt", "old"))
	dirA, dirB := s.OwnerDir("a"), s.OwnerDir("b")
	foreign := filepath.Join(dirA, "notes.txt") // not a spill-local name
	os.WriteFile(foreign, []byte("x"), 0o600)
	outside := filepath.Join(s.Root(), "session-zzz") // not an owner directory name
	os.Mkdir(outside, 0o700)
	outsideFile := filepath.Join(outside, "000000000000000000000000-x")
	os.WriteFile(outsideFile, []byte("x"), 0o600)
	linkTarget := filepath.Join(t.TempDir(), "target")
	os.WriteFile(linkTarget, []byte("x"), 0o600)
	link := filepath.Join(dirA, "111111111111111111111111-link")
	os.Symlink(linkTarget, link)

	past := now.Add(-2 * time.Hour)
	for _, p := range []string{string(old.Locator), string(oldOnly.Locator), foreign, outsideFile, dirB, outside} {
		if err := os.Chtimes(p, past, past); err != nil {
			t.Fatal(err)
		}
	}
	os.Chtimes(dirB, past, past)

	n, err := s.Cleanup(now)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("removed %d files, want 2", n)
	}
	for p, want := range map[string]bool{
		string(old.Locator): false, string(oldOnly.Locator): false, dirB: false,
		string(fresh.Locator): true, foreign: true, outsideFile: true, link: true, linkTarget: true, dirA: true,
	} {
		_, err := os.Lstat(p)
		if exists := err == nil; exists != want {
			t.Errorf("%s exists = %v, want %v", p, exists, want)
		}
	}
}

func TestCleanupWithoutMaxAgeDeletesNothing(t *testing.T) {
	s := newStore(t, LocalOptions{Keep: true})
	ref, _ := s.SaveText(context.Background(), toolReq("a", "x", "y"))
	n, err := s.Cleanup(time.Now().Add(1000 * time.Hour))
	if n != 0 || err != nil {
		t.Fatalf("Cleanup = %d, %v", n, err)
	}
	if _, err := os.Stat(string(ref.Locator)); err != nil {
		t.Fatal(err)
	}
}

func TestCloseDeletesOwnedDirectoriesUnlessKeep(t *testing.T) {
	for _, keep := range []bool{false, true} {
		root := filepath.Join(t.TempDir(), "spill")
		s := newStore(t, LocalOptions{Root: root, Keep: keep})
		other := filepath.Join(root, "session-000000000000")
		os.Mkdir(other, 0o700)
		ref, err := s.SaveText(context.Background(), toolReq("a", "x", "y"))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal("second Close:", err)
		}
		_, err = os.Stat(string(ref.Locator))
		if kept := err == nil; kept != keep {
			t.Errorf("keep=%v: file kept = %v", keep, kept)
		}
		if _, err := os.Stat(other); err != nil {
			t.Errorf("keep=%v: another owner's directory was removed", keep)
		}
		if _, err := s.SaveText(context.Background(), toolReq("a", "x", "y")); !errors.Is(err, ErrClosed) {
			t.Errorf("SaveText after Close: err = %v", err)
		}
	}
}

func TestConcurrentSavesAndClose(t *testing.T) {
	s := newStore(t, LocalOptions{})
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			_, err := s.SaveText(context.Background(), toolReq(string(rune('a'+i%4)), "x", "y"))
			if err != nil && !errors.Is(err, ErrClosed) {
				t.Error(err)
			}
		})
	}
	wg.Go(func() { s.Close() })
	wg.Wait()
	entries, _ := os.ReadDir(s.Root())
	if len(entries) != 0 {
		t.Errorf("owner directories left after Close: %d", len(entries))
	}
}

func BenchmarkSaveText10MB(b *testing.B) {
	s, err := NewLocalStore(LocalOptions{Root: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	content := strings.Repeat("line of tool output 0123456789\n", 10<<20/31+1)[:10<<20]
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		ref, err := s.SaveText(context.Background(), toolReq("bench", "bash.txt", content))
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		os.Remove(string(ref.Locator))
		b.StartTimer()
	}
	if d := processCPU() - cpu; d > 0 {
		b.ReportMetric(float64(b.N)*float64(len(content))/d.Seconds()/1e6, "cpu-MB/s")
	}
}

// Two stores (two harness processes) with the same owner share its
// directory: closing one must not delete the other's files, and the last
// one to close leaves no empty directory behind.
func TestCloseSparesFilesOfAnotherStoreWithTheSameOwner(t *testing.T) {
	root := filepath.Join(t.TempDir(), "spill")
	a := newStore(t, LocalOptions{Root: root})
	b := newStore(t, LocalOptions{Root: root})
	refA, err := a.SaveText(context.Background(), toolReq("default", "x", "from a"))
	if err != nil {
		t.Fatal(err)
	}
	refB, err := b.SaveText(context.Background(), toolReq("default", "x", "from b"))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(string(refA.Locator)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a's file survived a.Close: %v", err)
	}
	if got, err := os.ReadFile(string(refB.Locator)); err != nil || string(got) != "from b" {
		t.Fatalf("a.Close deleted b's spill: %q %v", got, err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(string(refB.Locator))); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("empty owner directory left: %v", err)
	}
}

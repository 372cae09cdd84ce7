package toolfs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func intp(n int) *int { return &n }

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func codeOf(err error) Code {
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Code
	}
	return ""
}

func TestReadWindowsAndFooters(t *testing.T) {
	dir := t.TempDir()
	small := writeFile(t, dir, "small.txt", "alpha\nbeta\r\ngamma")
	big := writeFile(t, dir, "big.txt", numbered(2500))
	empty := writeFile(t, dir, "empty.txt", "")
	f := New(DefaultCaps(), nil)
	tests := []struct {
		name   string
		args   ReadArgs
		want   string
		lines  int
		total  int
		offset int
	}{
		{"whole small file strips CR", ReadArgs{FilePath: small},
			"<path>" + small + "</path>\n<type>file</type>\n<content>\n1: alpha\n2: beta\n3: gamma\n\n(End of file - total 3 lines)\n</content>", 3, 3, 1},
		{"window in the middle", ReadArgs{FilePath: small, Offset: intp(2), Limit: intp(1)},
			"<path>" + small + "</path>\n<type>file</type>\n<content>\n2: beta\n\n(Showing lines 2-2 of 3. Use offset=3 to continue.)\n</content>", 1, 3, 2},
		{"default limit 2000 on a long file", ReadArgs{FilePath: big}, "(Showing lines 1-2000 of 2500. Use offset=2001 to continue.)", 2000, 2500, 1},
		{"continuation reaches the end", ReadArgs{FilePath: big, Offset: intp(2001)}, "(End of file - total 2500 lines)", 500, 2500, 2001},
		{"relative path resolves against cwd", ReadArgs{FilePath: "small.txt", Limit: intp(1)}, "1: alpha\n\n(Showing lines 1-1 of 3. Use offset=2 to continue.)", 1, 3, 1},
		{"empty file offset 1 shows only the footer", ReadArgs{FilePath: empty},
			"<path>" + empty + "</path>\n<type>file</type>\n<content>\n(End of file - total 0 lines)\n</content>", 0, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := f.Read(context.Background(), nil, dir, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			limit := DefaultReadLimit
			if tt.args.Limit != nil {
				limit = *tt.args.Limit
			}
			got := FormatRead(v, limit)
			if !strings.Contains(got, tt.want) {
				t.Fatalf("rendered\n%s\nwant it to contain\n%s", got, tt.want)
			}
			if len(v.Lines) != tt.lines || v.TotalLines != tt.total || v.Offset != tt.offset {
				t.Fatalf("lines=%d total=%d offset=%d", len(v.Lines), v.TotalLines, v.Offset)
			}
		})
	}
}

func TestReadCaps(t *testing.T) {
	dir := t.TempDir()
	long := writeFile(t, dir, "long.txt", strings.Repeat("é", 2500)+"\nshort\n")
	// 100 lines of 1000 bytes: the 50 KiB cap stops after 51 lines (51*1000 + 50 newlines = 51050 <= 51200).
	wide := writeFile(t, dir, "wide.txt", strings.Repeat(strings.Repeat("x", 1000)+"\n", 100))
	f := New(DefaultCaps(), nil)

	v, err := f.Read(context.Background(), nil, dir, ReadArgs{FilePath: long})
	if err != nil {
		t.Fatal(err)
	}
	wantLine := strings.Repeat("é", 2000) + "... (line truncated to 2000 chars)"
	if v.Lines[0].Text != wantLine || v.Lines[1].Text != "short" {
		t.Fatalf("line cap: got %q...", v.Lines[0].Text[:20])
	}

	v, err = f.Read(context.Background(), nil, dir, ReadArgs{FilePath: wide})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Lines) != 51 || v.TotalLines != 100 {
		t.Fatalf("byte cap: %d lines of %d", len(v.Lines), v.TotalLines)
	}
	if got := FormatRead(v, DefaultReadLimit); !strings.HasSuffix(got, "\n\n(Output capped. Showing lines 1-51. Use offset=52 to continue.)\n</content>") {
		t.Fatalf("footer: %s", got[len(got)-120:])
	}
}

func TestReadRefusals(t *testing.T) {
	dir := t.TempDir()
	bin := writeFile(t, dir, "bin.dat", "text\x00more")
	bad := writeFile(t, dir, "bad.txt", "ok\n\xff\xfe\n")
	small := writeFile(t, dir, "small.txt", "a\nb\n")
	fifo := filepath.Join(dir, "fifo")
	if err := mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	f := New(DefaultCaps(), nil)
	tests := []struct {
		name string
		args ReadArgs
		code Code
		msg  string
	}{
		{"binary", ReadArgs{FilePath: bin}, CodeNotText, `cannot read "` + bin + `": binary file`},
		{"invalid utf-8", ReadArgs{FilePath: bad}, CodeNotText, `cannot read "` + bad + `": invalid UTF-8 text`},
		{"directory", ReadArgs{FilePath: dir}, CodeNotRegularFile, `cannot read "` + dir + `": not a regular file`},
		{"fifo without writer (must not hang)", ReadArgs{FilePath: fifo}, CodeNotRegularFile, `cannot read "` + fifo + `": not a regular file`},
		{"missing", ReadArgs{FilePath: "nope.txt"}, CodeNotFound, `cannot read "` + filepath.Join(dir, "nope.txt") + `": not found`},
		{"offset past end", ReadArgs{FilePath: small, Offset: intp(5)}, CodeNotFound, `offset 5 is out of range for "` + small + `" (2 lines)`},
		{"blank path", ReadArgs{FilePath: "  "}, "", "file_path must be a non-empty string"},
		{"zero offset", ReadArgs{FilePath: small, Offset: intp(0)}, "", "offset must be a positive integer"},
		{"negative limit", ReadArgs{FilePath: small, Limit: intp(-1)}, "", "limit must be a positive integer"},
		{"limit over max", ReadArgs{FilePath: small, Limit: intp(2001)}, "", "limit must be less than or equal to 2000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.Read(context.Background(), nil, dir, tt.args)
			if err == nil || err.Error() != tt.msg || codeOf(err) != tt.code {
				t.Fatalf("got %v (code %q), want %q (code %q)", err, codeOf(err), tt.msg, tt.code)
			}
		})
	}
}

func TestBuildWindowSplitsRunesAcrossChunks(t *testing.T) {
	// A multi-byte rune straddling the 64 KiB chunk boundary must not be taken for invalid UTF-8.
	content := strings.Repeat("a", readChunkBytes-1) + "€\nnext\n"
	res, err := BuildWindow(strings.NewReader(content), Window{Offset: 2, Limit: 10, MaxLineLength: 10, MaxBytes: 1000}, "p")
	if err != nil {
		t.Fatal(err)
	}
	if res.TotalLines != 2 || res.Lines[0].Text != "next" {
		t.Fatalf("%+v", res)
	}
}

func TestEditRules(t *testing.T) {
	dir := t.TempDir()
	f := New(DefaultCaps(), nil)
	tests := []struct {
		name    string
		content string
		args    EditArgs
		want    string
		code    Code
		msg     string
	}{
		{"single replacement", "a foo b\n", EditArgs{OldString: "foo", NewString: "bar"}, "a bar b\n", "", ""},
		{"deletion", "a foo b\n", EditArgs{OldString: " foo", NewString: ""}, "a b\n", "", ""},
		{"not found", "a foo b\n", EditArgs{OldString: "zzz", NewString: "y"}, "", CodeEditNotFound, `old_string was not found in "%s"`},
		{"ambiguous", "x x x\n", EditArgs{OldString: "x", NewString: "y"}, "", CodeAmbiguousEdit, `old_string matched 3 times in "%s"; provide a more specific old_string or set replace_all to true`},
		{"replace_all", "x x x\n", EditArgs{OldString: "x", NewString: "yy", ReplaceAll: true}, "yy yy yy\n", "", ""},
		{"non-overlapping count", "aaaa\n", EditArgs{OldString: "aa", NewString: "b", ReplaceAll: true}, "bb\n", "", ""},
		{"non-overlapping ambiguity", "aaa\n", EditArgs{OldString: "aa", NewString: "b"}, "b" + "a\n", "", ""},
		{"CRLF file keeps CRLF", "one\r\ntwo\r\nthree\r\n", EditArgs{OldString: "one\ntwo", NewString: "uno\ndos\nmas"}, "uno\r\ndos\r\nmas\r\nthree\r\n", "", ""},
		{"CRLF old_string matches CRLF file", "one\r\ntwo\r\n", EditArgs{OldString: "one\r\ntwo", NewString: "x"}, "x\r\n", "", ""},
		{"same strings", "a\n", EditArgs{OldString: "a", NewString: "a"}, "", "", "old_string and new_string must differ"},
		{"empty old", "a\n", EditArgs{OldString: "", NewString: "a"}, "", "", "old_string must be a non-empty string"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, fmt.Sprintf("f%d.txt", i))
			if err := os.WriteFile(p, []byte(tt.content), 0o640); err != nil {
				t.Fatal(err)
			}
			tt.args.FilePath = p
			v, err := f.Edit(context.Background(), nil, dir, tt.args)
			if tt.msg != "" {
				want := tt.msg
				if strings.Contains(want, "%s") {
					want = fmt.Sprintf(want, p)
				}
				if err == nil || err.Error() != want || codeOf(err) != tt.code {
					t.Fatalf("got %v (code %q), want %q", err, codeOf(err), want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(p)
			if string(got) != tt.want {
				t.Fatalf("file = %q, want %q", got, tt.want)
			}
			if v.After != NormalizeLineEndings(tt.want) || v.Before != NormalizeLineEndings(tt.content) {
				t.Fatalf("value %+v", v)
			}
			if st, _ := os.Stat(p); st.Mode().Perm() != 0o640 {
				t.Fatalf("mode %v", st.Mode())
			}
		})
	}
}

func TestEditMessages(t *testing.T) {
	if got := FormatEdit("/a", false); got != "The file /a has been updated successfully." {
		t.Fatal(got)
	}
	if got := FormatEdit("/a", true); got != "The file /a has been updated. All occurrences were successfully replaced." {
		t.Fatal(got)
	}
	if got := FormatWrite("/a", OpCreate); got != "<path>/a</path>\n<type>file</type>\n<content>\nCreated file\n</content>" {
		t.Fatal(got)
	}
	if got := FormatWrite("/a", OpUpdate); !strings.Contains(got, "\nUpdated file\n") {
		t.Fatal(got)
	}
}

func TestWriteCreatesAndKeepsMode(t *testing.T) {
	dir := t.TempDir()
	f := New(DefaultCaps(), nil)
	v, err := f.Write(context.Background(), nil, dir, WriteArgs{FilePath: "sub/new.txt", Content: "hi\r\nthere\n"})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "sub", "new.txt")
	if v.Path != p || v.Operation != OpCreate || v.Before != nil || v.After != "hi\nthere\n" {
		t.Fatalf("%+v", v)
	}
	if b, _ := os.ReadFile(p); string(b) != "hi\r\nthere\n" {
		t.Fatalf("content %q", b)
	}
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	v, err = f.Write(context.Background(), nil, dir, WriteArgs{FilePath: p, Content: "new"})
	if err != nil {
		t.Fatal(err)
	}
	if v.Operation != OpUpdate || v.Before == nil || *v.Before != "hi\nthere\n" {
		t.Fatalf("%+v", v)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o755 {
		t.Fatalf("mode %v", st.Mode())
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "sub"))
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
	if _, err := f.Write(context.Background(), nil, dir, WriteArgs{FilePath: dir, Content: "x"}); codeOf(err) != CodeNotRegularFile {
		t.Fatalf("directory write: %v", err)
	}
}

func TestReadBeforeWritePolicy(t *testing.T) {
	dir := t.TempDir()
	existing := writeFile(t, dir, "existing.txt", "v1\n")
	f := New(DefaultCaps(), NewObservations())
	ctx := context.Background()
	session, other := "session-a", "session-b"

	// Creating a new file needs no read; the write itself counts as an observation.
	if _, err := f.Write(ctx, session, dir, WriteArgs{FilePath: "fresh.txt", Content: "one\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Edit(ctx, session, dir, EditArgs{FilePath: "fresh.txt", OldString: "one", NewString: "two"}); err != nil {
		t.Fatalf("edit after own write: %v", err)
	}
	// Another scope never saw it.
	_, err := f.Edit(ctx, other, dir, EditArgs{FilePath: "fresh.txt", OldString: "two", NewString: "three"})
	wantMsg := `edit requires reading "` + filepath.Join(dir, "fresh.txt") + `" first — read the file, then retry`
	if codeOf(err) != CodeNotObserved || err.Error() != wantMsg {
		t.Fatalf("edit by other scope: %v", err)
	}
	// Overwriting an unread existing file is refused.
	_, err = f.Write(ctx, session, dir, WriteArgs{FilePath: existing, Content: "v2\n"})
	if codeOf(err) != CodeNotObserved || err.Error() != `cannot overwrite existing "`+existing+`" without reading it first — read the file, then retry` {
		t.Fatalf("blind overwrite: %v", err)
	}
	// After a read it is allowed.
	if _, err := f.Read(ctx, session, dir, ReadArgs{FilePath: existing}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(ctx, session, dir, WriteArgs{FilePath: existing, Content: "v2\n"}); err != nil {
		t.Fatalf("overwrite after read: %v", err)
	}
	// An outside change makes the observation stale, for write and edit alike.
	if err := os.WriteFile(existing, []byte("changed outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = f.Edit(ctx, session, dir, EditArgs{FilePath: existing, OldString: "v2", NewString: "v3"})
	if codeOf(err) != CodeStaleVersion || err.Error() != `cannot edit "`+existing+`": file changed since it was read — re-read the file, then retry` {
		t.Fatalf("stale edit: %v", err)
	}
	_, err = f.Write(ctx, session, dir, WriteArgs{FilePath: existing, Content: "v3\n"})
	if codeOf(err) != CodeStaleVersion || err.Error() != `cannot write "`+existing+`": file changed since it was read — re-read the file, then retry` {
		t.Fatalf("stale write: %v", err)
	}
	// Deleted since read.
	if _, err := f.Read(ctx, session, dir, ReadArgs{FilePath: existing}); err != nil {
		t.Fatal(err)
	}
	os.Remove(existing)
	_, err = f.Write(ctx, session, dir, WriteArgs{FilePath: existing, Content: "v4\n"})
	if codeOf(err) != CodeStaleVersion || !strings.Contains(err.Error(), "file no longer exists") {
		t.Fatalf("vanished: %v", err)
	}
	// A read that found nothing records absence: edit then says not found, create works.
	missing := filepath.Join(dir, "missing.txt")
	if _, err := f.Read(ctx, session, dir, ReadArgs{FilePath: missing}); codeOf(err) != CodeNotFound {
		t.Fatal(err)
	}
	if _, err := f.Edit(ctx, session, dir, EditArgs{FilePath: missing, OldString: "a", NewString: "b"}); codeOf(err) != CodeNotFound {
		t.Fatalf("edit of confirmed absence: %v", err)
	}
	// A file that appears between the absence and the write is not clobbered.
	writeFile(t, dir, "missing.txt", "someone else's\n")
	if _, err := f.Write(ctx, session, dir, WriteArgs{FilePath: missing, Content: "mine\n"}); codeOf(err) != CodeNotObserved {
		t.Fatalf("create over appeared file: %v", err)
	}
	if b, _ := os.ReadFile(missing); string(b) != "someone else's\n" {
		t.Fatalf("clobbered: %q", b)
	}
}

func TestWriteThenEditWithoutReadIsRefusedForExistingFile(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "a.txt", "hello\n")
	f := New(DefaultCaps(), NewObservations())
	if _, err := f.Write(context.Background(), 1, dir, WriteArgs{FilePath: p, Content: "x"}); codeOf(err) != CodeNotObserved {
		t.Fatalf("write: %v", err)
	}
	if _, err := f.Edit(context.Background(), 1, dir, EditArgs{FilePath: p, OldString: "hello", NewString: "bye"}); codeOf(err) != CodeNotObserved {
		t.Fatalf("edit: %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "hello\n" {
		t.Fatalf("file changed: %q", b)
	}
}

func TestAbortedContext(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "a.txt", "hello\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := New(DefaultCaps(), nil)
	if _, err := f.Read(ctx, nil, dir, ReadArgs{FilePath: p}); codeOf(err) != CodeAborted {
		t.Fatalf("read: %v", err)
	}
	if _, err := f.Write(ctx, nil, dir, WriteArgs{FilePath: p, Content: "x"}); codeOf(err) != CodeAborted {
		t.Fatalf("write: %v", err)
	}
}

func BenchmarkReadWindow(b *testing.B) {
	dir := b.TempDir()
	content := numbered(200000) // ~2.3 MB
	p := filepath.Join(dir, "big.txt")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	f := New(DefaultCaps(), nil)
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Read(context.Background(), nil, dir, ReadArgs{FilePath: p}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestBuildWindowCountsLinesPastAFullWindow(t *testing.T) {
	for content, want := range map[string]int{"a\nb\nc": 3, "a\nb\nc\n": 3, "a\n\n\n": 3, "a\nbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb": 2} {
		res, err := BuildWindow(strings.NewReader(content), Window{Offset: 1, Limit: 1, MaxLineLength: 5, MaxBytes: 100}, "p")
		if err != nil || res.TotalLines != want || len(res.Lines) != 1 {
			t.Errorf("%q: %+v %v, want %d lines", content, res, err, want)
		}
	}
	// A one-byte reader exercises the chunk boundaries of the counting path.
	res, err := BuildWindow(oneByteReader{strings.NewReader("x\ny\nzz")}, Window{Offset: 1, Limit: 1, MaxLineLength: 5, MaxBytes: 100}, "p")
	if err != nil || res.TotalLines != 3 {
		t.Errorf("%+v %v", res, err)
	}
}

type oneByteReader struct{ r *strings.Reader }

func (o oneByteReader) Read(p []byte) (int, error) { return o.r.Read(p[:1]) }

func TestUnscopedCallsAreNotGuarded(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "a.txt", "hello\n")
	f := New(DefaultCaps(), NewObservations())
	if _, err := f.Edit(context.Background(), nil, dir, EditArgs{FilePath: p, OldString: "hello", NewString: "bye"}); err != nil {
		t.Fatalf("edit: %v", err)
	}
	if _, err := f.Write(context.Background(), nil, dir, WriteArgs{FilePath: p, Content: "x"}); err != nil {
		t.Fatalf("write: %v", err)
	}
}

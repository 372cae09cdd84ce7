package toolsearch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// execRunner runs ripgrep with os/exec: a real process, used to test the
// ripgrep path of Searcher independently of the subprocess service.
type execRunner struct{}

func (execRunner) Run(ctx context.Context, argv []string, dir string, caps Caps) (RunResult, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := RunResult{Stdout: out.Bytes(), Stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		ws := ee.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			res.Signal, res.ExitCode = ws.Signal().String(), -1
		} else {
			res.ExitCode = ws.ExitStatus()
		}
	case err != nil:
		return res, err
	}
	res.StdoutLossy = len(res.Stdout) > caps.RawOutputMaxBytes
	return res, nil
}

func strp(s string) *string { return &s }

// fixture builds a tree exercising hidden files, .gitignore (root and nested,
// with negation and directory rules), .ignore, VCS directories, symlinks,
// binary files, CRLF and invalid UTF-8 lines. Modification times are distinct
// and increase in creation order.
func fixture(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	files := []struct{ path, content string }{
		{".gitignore", "build/\n*.log\n!keep.log\n/rootonly.txt\n"},
		{"src/a.go", "package a\n// TODO: first\nfunc A() {}\n"},
		{"src/b.go", "package a\n\n// todo lower\n// TODO: second\r\n"},
		{"src/sub/c.go", "package sub\n// TODO: nested\n"},
		{"src/sub/.gitignore", "generated.go\n"},
		{"src/sub/generated.go", "// TODO: generated\n"},
		{"src/sub/rootonly.txt", "TODO: not anchored here\n"},
		{"rootonly.txt", "TODO: anchored\n"},
		{"build/out.go", "// TODO: built\n"},
		{"app.log", "TODO: log\n"},
		{"keep.log", "TODO: kept log\n"},
		{".hidden/h.go", "// TODO: hidden\n"},
		{".git/config", "TODO: git\n"},
		{"docs/readme.md", "TODO docs\nbad \xff\xfe TODO bytes\n"},
		{"docs/.ignore", "draft.md\n"},
		{"docs/draft.md", "TODO draft\n"},
		{"bin/blob.bin", "TODO\x00binary\n"},
		{"wide.txt", strings.Repeat("x", 3000) + " TODO wide\n"},
	}
	base := time.Now().Add(-time.Hour)
	for i, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.content), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := base.Add(time.Duration(i) * time.Second)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "src", "a.go"), filepath.Join(root, "link.go")); err != nil {
		t.Fatal(err)
	}
	return root
}

func searchers(t testing.TB) map[string]*Searcher {
	t.Helper()
	out := map[string]*Searcher{"go": {Caps: DefaultCaps()}}
	if rg, err := exec.LookPath("rg"); err == nil {
		out["rg"] = &Searcher{Runner: execRunner{}, RG: rg, Caps: DefaultCaps()}
	} else if os.Getenv("CI") != "" {
		t.Fatal("ripgrep must be installed in CI")
	} else {
		t.Log("rg not on PATH: only the pure-Go path is tested")
	}
	return out
}

func grepLines(v GrepValue) []string {
	var out []string
	for _, m := range v.Matches {
		out = append(out, fmt.Sprintf("%s:%d:%s", m.Path, m.LineNumber, m.Line))
	}
	return out
}

func TestGrepBackendsAgree(t *testing.T) {
	root := fixture(t)
	tests := []struct {
		name string
		cwd  string
		args GrepArgs
		want []string
	}{
		{"default walk honours ignore rules and hidden", root, GrepArgs{Pattern: "TODO"}, []string{
			"docs/readme.md:1:TODO docs",
			"docs/readme.md:2:(line is not valid UTF-8)",
			"keep.log:1:TODO: kept log",
			"src/a.go:2:// TODO: first",
			"src/b.go:4:// TODO: second",
			"src/sub/c.go:2:// TODO: nested",
			"src/sub/rootonly.txt:1:TODO: not anchored here",
			"wide.txt:1:" + strings.Repeat("x", 3000) + " TODO wide",
		}},
		{"include glob by basename", root, GrepArgs{Pattern: "TODO: (first|second|nested)", Include: strp("*.go")}, []string{
			"src/a.go:2:// TODO: first", "src/b.go:4:// TODO: second", "src/sub/c.go:2:// TODO: nested",
		}},
		{"include glob with a slash is root-relative", root, GrepArgs{Pattern: "TODO", Include: strp("src/*.go")}, []string{
			"src/a.go:2:// TODO: first", "src/b.go:4:// TODO: second",
		}},
		{"include whitelists ignored files but not ignored directories", root, GrepArgs{Pattern: "TODO", Include: strp("*.{md,log}")}, []string{
			"app.log:1:TODO: log", "docs/draft.md:1:TODO draft",
			"docs/readme.md:1:TODO docs", "docs/readme.md:2:(line is not valid UTF-8)", "keep.log:1:TODO: kept log",
		}},
		{"include whitelists hidden files", root, GrepArgs{Pattern: "TODO", Include: strp("*.gitignore")}, nil},
		{"include matching a hidden directory descends into it", root, GrepArgs{Pattern: "TODO", Include: strp(".hidden")}, nil},
		{"relative directory path uses parent ignore files", root, GrepArgs{Pattern: "TODO", Path: strp("src/sub")}, []string{
			"src/sub/c.go:2:// TODO: nested", "src/sub/rootonly.txt:1:TODO: not anchored here",
		}},
		{"explicit file bypasses ignore rules", root, GrepArgs{Pattern: "TODO", Path: strp("build/out.go")}, []string{
			"build/out.go:1:// TODO: built",
		}},
		{"regex anchors per line", root, GrepArgs{Pattern: "^package (a|sub)$"}, []string{
			"src/a.go:1:package a", "src/b.go:1:package a", "src/sub/c.go:1:package sub",
		}},
		{"cwd outside the search root gives absolute paths", t.TempDir(), GrepArgs{Pattern: "nested", Path: strp(filepath.Join(root, "src"))}, []string{
			filepath.Join(root, "src/sub/c.go") + ":2:// TODO: nested",
		}},
		{"no matches", root, GrepArgs{Pattern: "NOPE-NEVER"}, nil},
	}
	for name, s := range searchers(t) {
		for _, tt := range tests {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				v, err := s.Grep(context.Background(), tt.cwd, tt.args)
				if err != nil {
					t.Fatal(err)
				}
				if got := grepLines(v); !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
				}
			})
		}
	}
}

func TestGlobBackendsAgree(t *testing.T) {
	root := fixture(t)
	tests := []struct {
		name string
		args GlobArgs
		want []string
	}{
		{"basename pattern at any depth, newest first, hidden and ignored included", GlobArgs{Pattern: "*.go"}, []string{
			".hidden/h.go", "build/out.go", "src/sub/generated.go", "src/sub/c.go", "src/b.go", "src/a.go",
		}},
		{"slash pattern is root-relative and * stops at /", GlobArgs{Pattern: "src/*.go"}, []string{"src/b.go", "src/a.go"}},
		{"doublestar", GlobArgs{Pattern: "src/**/*.go"}, []string{"src/sub/generated.go", "src/sub/c.go", "src/b.go", "src/a.go"}},
		{"path narrows the root", GlobArgs{Pattern: "*.txt", Path: strp("src")}, []string{"src/sub/rootonly.txt"}},
		{"VCS directories excluded", GlobArgs{Pattern: "config"}, nil},
		{"directories are never results", GlobArgs{Pattern: "sub"}, nil},
		{"everything", GlobArgs{Pattern: "*.log"}, []string{"keep.log", "app.log"}},
	}
	for name, s := range searchers(t) {
		for _, tt := range tests {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				v, err := s.Glob(context.Background(), root, tt.args)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(v.Paths, tt.want) && !(len(v.Paths) == 0 && len(tt.want) == 0) {
					t.Fatalf("got %q, want %q", v.Paths, tt.want)
				}
			})
		}
	}
}

func TestSearchErrors(t *testing.T) {
	root := fixture(t)
	for name, s := range searchers(t) {
		t.Run(name, func(t *testing.T) {
			_, err := s.Grep(context.Background(), root, GrepArgs{Pattern: "("})
			var se *Error
			if !errors.As(err, &se) || se.Code != CodeInvalidPattern {
				t.Fatalf("invalid regex: %v", err)
			}
			_, err = s.Grep(context.Background(), root, GrepArgs{Pattern: "x", Path: strp("missing")})
			if !errors.As(err, &se) || se.Code != CodeFailed {
				t.Fatalf("missing path: %v", err)
			}
			_, err = s.Glob(context.Background(), root, GlobArgs{Pattern: "a.go", Path: strp("src/a.go")})
			if !errors.As(err, &se) || se.Code != CodeFailed || !strings.Contains(err.Error(), "is not a directory") {
				t.Fatalf("file root: %v", err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err = s.Grep(ctx, root, GrepArgs{Pattern: "x"})
			if !errors.As(err, &se) || se.Code != CodeAborted {
				t.Fatalf("aborted: %v", err)
			}
		})
	}
}

func TestArgumentChecks(t *testing.T) {
	tests := []struct {
		args GrepArgs
		want string
	}{
		{GrepArgs{Pattern: ""}, "pattern must be a non-empty string"},
		{GrepArgs{Pattern: "x", Path: strp(" ")}, "path must be a non-empty string when given"},
		{GrepArgs{Pattern: "x", Include: strp(" ")}, "include must be a non-empty glob when given"},
		{GrepArgs{Pattern: "x", Include: strp("!*.go")}, `include must be a positive glob filter; negated patterns ("!…") are not supported`},
		{GrepArgs{Pattern: "x", Include: strp("*.go,*.ts")}, "include must be one glob, not a comma-separated list (use {a,b} alternation instead)"},
		{GrepArgs{Pattern: "x", Include: strp("*.{go,ts}")}, ""},
	}
	for _, tt := range tests {
		err := ValidateGrep(tt.args)
		if (err == nil && tt.want != "") || (err != nil && err.Error() != tt.want) {
			t.Errorf("%+v: got %v, want %q", tt.args, err, tt.want)
		}
	}
	if err := ValidateGlob(GlobArgs{Pattern: " "}); err == nil || err.Error() != "pattern must be a non-empty string" {
		t.Error(err)
	}
}

func TestFormatGrep(t *testing.T) {
	caps := DefaultCaps()
	caps.MaxMatches = 2
	caps.MaxLineBytes = 5
	one := GrepValue{Matches: []Match{{Path: "a.go", LineNumber: 3, Line: "abc"}}}
	if got := FormatGrep(one, caps); got != "Found 1 match\n\na.go\nLine 3: abc" {
		t.Fatalf("%q", got)
	}
	if got := FormatGrep(GrepValue{}, caps); got != "No matches found" {
		t.Fatal(got)
	}
	three := GrepValue{Matches: []Match{
		{Path: "a.go", LineNumber: 1, Line: "héllo world"},
		{Path: "b.go", LineNumber: 2, Line: "x"},
		{Path: "b.go", LineNumber: 9, Line: "y"},
	}}
	want := "Found 2 of 3 matches\n\na.go\nLine 1: héll (line truncated)\n\nb.go\nLine 2: x\n\n(The complete result could not be saved; narrow pattern, path, or include to see more.)"
	if got := FormatGrep(three, caps); got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	three.Spill = &SpillNote{Locator: "/tmp/s/grep-results.txt", Hint: "Use read with offset/limit, or grep this path to search within it."}
	if got := FormatGrep(three, caps); !strings.HasSuffix(got, "\n\n(Full grep result stored at: /tmp/s/grep-results.txt. Use read with offset/limit, or grep this path to search within it.)") {
		t.Fatal(got)
	}
	if got := FullGrepText(three.Matches, 5); !strings.HasPrefix(got, "Found 3 matches\n\na.go\n") || !strings.HasSuffix(got, "Line 9: y") {
		t.Fatal(got)
	}
}

func TestFormatGlob(t *testing.T) {
	caps := DefaultCaps()
	caps.MaxResults = 2
	if got := FormatGlob(GlobValue{}, caps); got != "No files found" {
		t.Fatal(got)
	}
	if got := FormatGlob(GlobValue{Paths: []string{"a", "b"}}, caps); got != "a\nb" {
		t.Fatal(got)
	}
	got := FormatGlob(GlobValue{Paths: []string{"a", "b", "c"}}, caps)
	if got != "a\nb\n\n(Showing 2 of 3 paths. The complete result could not be saved; narrow pattern or path to see more.)" {
		t.Fatal(got)
	}
	got = FormatGlob(GlobValue{Paths: []string{"a", "b", "c"}, Spill: &SpillNote{Locator: "/s", Hint: "H"}}, caps)
	if got != "a\nb\n\n(Showing 2 of 3 paths. Full sorted result stored at: /s. H)" {
		t.Fatal(got)
	}
}

func TestMatchCapCountsAllMatches(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	for i := 0; i < 300; i++ {
		b.WriteString("needle\n")
	}
	if err := os.WriteFile(filepath.Join(root, "many.txt"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, s := range searchers(t) {
		t.Run(name, func(t *testing.T) {
			v, err := s.Grep(context.Background(), root, GrepArgs{Pattern: "needle"})
			if err != nil {
				t.Fatal(err)
			}
			if len(v.Matches) != 300 {
				t.Fatalf("%d matches", len(v.Matches))
			}
			if got := FormatGrep(v, s.Caps); !strings.HasPrefix(got, "Found 250 of 300 matches\n\nmany.txt\nLine 1: needle\n") {
				t.Fatal(got[:80])
			}
		})
	}
}

func BenchmarkGrep(b *testing.B) {
	root := b.TempDir()
	var sb strings.Builder
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&sb, "line %d of some ordinary source text with words\n", i)
	}
	content := sb.String()
	for i := 0; i < 50; i++ {
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("f%02d.txt", i)), []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for name, s := range searchers(b) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(content) * 50))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Grep(context.Background(), root, GrepArgs{Pattern: "line 1999[0-9]"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestRipgrepRawOutputOverflow(t *testing.T) {
	s, ok := searchers(t)["rg"]
	if !ok {
		t.Skip("rg not on PATH")
	}
	caps := s.Caps
	caps.RawOutputMaxBytes = 100
	small := &Searcher{Runner: s.Runner, RG: s.RG, Caps: caps}
	_, err := small.Grep(context.Background(), fixture(t), GrepArgs{Pattern: "TODO"})
	var se *Error
	if !errors.As(err, &se) || se.Code != CodeRawOutputOverflow || !strings.Contains(err.Error(), "narrow pattern, path, or include and retry") {
		t.Fatalf("%v", err)
	}
}

func TestSearchTimeoutIsAborted(t *testing.T) {
	root := fixture(t)
	for name, s := range searchers(t) {
		t.Run(name, func(t *testing.T) {
			caps := s.Caps
			caps.Timeout = time.Nanosecond
			slow := &Searcher{Runner: s.Runner, RG: s.RG, Caps: caps}
			_, err := slow.Grep(context.Background(), root, GrepArgs{Pattern: "TODO"})
			var se *Error
			if !errors.As(err, &se) || se.Code != CodeAborted {
				t.Fatalf("%v", err)
			}
		})
	}
}

func TestFormatGlobSampled(t *testing.T) {
	caps := DefaultCaps()
	caps.MaxResults, caps.SampleOverCapGlob = 3, true
	v := GlobValue{Root: ".", Paths: []string{"a/1", "a/2", "a/3", "b/1", "c/1", "c/2"}}
	got := FormatGlob(v, caps)
	if got != "a/1\nb/1\nc/1\n\n(Showing 3 of 6 paths, sampled across 3 of the 3 top-level entries this pattern matched instead of taken in modification-time order. The complete result could not be saved; narrow pattern or path to see more.)" {
		t.Fatalf("%q", got)
	}
	caps.MaxResults = 2
	if got := FormatGlob(v, caps); !strings.HasPrefix(got, "a/1\nb/1\n\n(Showing 2 of 6 paths, sampled across 2 of the 3 top-level entries this pattern matched instead of taken in modification-time order. Narrow path to inspect a specific subtree. ") {
		t.Fatalf("%q", got)
	}
	sample, shown, total := SampleAcrossTopLevel([]string{"src/x/1", "src/y/2", "src/x/3"}, 2, "src")
	if !reflect.DeepEqual(sample, []string{"src/x/1", "src/x/3"}) && !reflect.DeepEqual(sample, []string{"src/x/1", "src/y/2"}) || shown != 2 || total != 2 {
		t.Fatalf("%v %d %d", sample, shown, total)
	}
}

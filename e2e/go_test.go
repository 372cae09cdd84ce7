package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A Go module with a failing test, fixed the way a model would: read the
// test, run `go test ./...` (it fails), read the code, edit the fix, run
// the tests again (they pass), answer. The build and test caches are the
// sandbox's (the cache root), so the tests can build at all (the user's
// ~/.cache/go-build is read-only there) and a second session's `go test`
// is a cache hit: `(cached)`.
// (A module with a third-party dependency fetched through the network
// allowlist's proxy: TestGoModDownloadThroughTheProxy.)
func TestGoModuleFailingTest(t *testing.T) {
	t.Parallel()
	needTools(t, "go", "bwrap")
	p := newProject(t, map[string]string{
		"go.mod":  "module example.com/calc\n\ngo 1.22\n",
		"calc.go": "// Package calc does arithmetic.\npackage calc\n\n// Add returns a plus b.\nfunc Add(a, b int) int { return a - b }\n",
		"calc_test.go": "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n" +
			"\tfor _, c := range []struct{ a, b, want int }{{1, 2, 3}, {2, 2, 4}, {-1, 1, 0}} {\n" +
			"\t\tif got := Add(c.a, c.b); got != c.want {\n\t\t\tt.Errorf(\"Add(%d, %d) = %d, want %d\", c.a, c.b, got, c.want)\n\t\t}\n\t}\n}\n",
	})
	o := p.run("The tests fail. Fix the bug.",
		read("c1", "calc_test.go"),
		bash("c2", "go test ./...", "run the tests"),
		read("c3", "calc.go"),
		edit("c4", "calc.go", "return a - b", "return a + b"),
		timedBash("c5", "go test ./...", "run the tests again"),
		answer("Fixed Add: it subtracted."),
	)
	o.mustSucceed(t, "Fixed Add: it subtracted.")
	if r := o.toolResult(t, "c2"); !strings.Contains(r, "Add(1, 2) = -1, want 3") || !strings.Contains(r, "FAIL") {
		t.Fatalf("the first go test did not fail on the bug:\n%s", r)
	}
	first := o.toolResult(t, "c5")
	if !strings.Contains(first, "ok  \texample.com/calc") {
		t.Fatalf("go test after the fix:\n%s", first)
	}
	if b, _ := os.ReadFile(filepath.Join(p.dir, "calc.go")); !strings.Contains(string(b), "return a + b") {
		t.Fatalf("calc.go on disk:\n%s", b)
	}
	if out, err := inDir(t, p.dir, nil, "go", "test", "-count=1", "./..."); err != nil {
		t.Fatalf("the project's tests fail after the run: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(cacheRoot(), "go-build")); err != nil {
		t.Fatalf("the sandbox's Go build cache: %v", err)
	}

	// A second session: the tests are a cache hit.
	o = p.run("Run the tests.",
		timedBash("c1", "go test ./...", "run the tests"),
		answer("They pass."),
	)
	o.mustSucceed(t, "They pass.")
	second := o.toolResult(t, "c1")
	if !strings.Contains(second, "ok  \texample.com/calc\t(cached)") {
		t.Fatalf("the second session's go test was not a cache hit:\n%s", second)
	}
	reportWarm(t, "go test ./...", elapsed(t, first), elapsed(t, second))
}

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pythonWithPytest is a python3 that can `import pytest`: the first
// python3 on PATH, else Debian's /usr/bin/python3 (python3-pytest; a
// pyenv python3 first on PATH usually has no pytest). None skips the
// test, or fails it in CI.
func pythonWithPytest(t *testing.T) string {
	t.Helper()
	var tried []string
	candidates := []string{"/usr/bin/python3"}
	if p, err := exec.LookPath("python3"); err == nil {
		candidates = append([]string{p}, candidates...)
	}
	for _, py := range candidates {
		if out, err := exec.Command(py, "-c", "import pytest, ensurepip").CombinedOutput(); err != nil {
			tried = append(tried, py+": "+strings.TrimSpace(string(out)))
			continue
		}
		return py
	}
	missing(t, "no python3 with pytest and venv (Debian: python3-pytest python3-venv): "+strings.Join(tried, "; "))
	return ""
}

// A Python package whose pytest suite fails: the model reads the test,
// runs `python3 -m pytest` (it fails), edits the fix, creates a venv in
// the workspace (with the system's site packages: PyPI is not reachable)
// and runs the tests from it (they pass). The second session's run finds
// the workspace's bytecode and pytest cache.
func TestPythonPackagePytest(t *testing.T) {
	t.Parallel()
	needTools(t, "bwrap")
	py := pythonWithPytest(t)
	p := newProject(t, map[string]string{
		"pyproject.toml":       "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\npythonpath = [\"src\"]\n",
		"src/calc/__init__.py": "__version__ = \"0.1.0\"\n\n\ndef mean(xs):\n    \"\"\"The arithmetic mean of xs.\"\"\"\n    return sum(xs) / (len(xs) + 1)\n",
		"tests/test_calc.py": "import calc\n\n\ndef test_mean():\n    assert calc.mean([1, 2, 3]) == 2\n\n\ndef test_mean_one():\n    assert calc.mean([5]) == 5\n\n\n" +
			"def test_mean_floats():\n    assert calc.mean([0.5, 1.5]) == 1.0\n\n\ndef test_version():\n    assert calc.__version__ == \"0.1.0\"\n",
	})
	// The python3 with pytest first on PATH, as the user who runs these
	// tests has it.
	p.path = filepath.Dir(py) + string(os.PathListSeparator) + p.path
	o := p.run("pytest fails. Fix it.",
		read("c1", "tests/test_calc.py"),
		bash("c2", "python3 -m pytest -q", "run the tests"),
		read("c3", "src/calc/__init__.py"),
		edit("c4", "src/calc/__init__.py", "(len(xs) + 1)", "len(xs)"),
		timedBash("c5", "python3 -m venv --system-site-packages .venv && .venv/bin/python -m pytest -q", "run the tests in a venv"),
		answer("Fixed mean: it divided by n+1."),
	)
	o.mustSucceed(t, "Fixed mean: it divided by n+1.")
	if r := o.toolResult(t, "c2"); !strings.Contains(r, "3 failed, 1 passed") {
		t.Fatalf("the first pytest run did not fail on the bug:\n%s", r)
	}
	first := o.toolResult(t, "c5")
	if !strings.Contains(first, "4 passed") {
		t.Fatalf("pytest in the venv after the fix:\n%s", first)
	}
	if _, err := os.Stat(filepath.Join(p.dir, ".venv", "bin", "python")); err != nil {
		t.Fatalf("the venv in the workspace: %v", err)
	}
	if out, err := inDir(t, p.dir, nil, filepath.Join(p.dir, ".venv", "bin", "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider"); err != nil || !strings.Contains(out, "4 passed") {
		t.Fatalf("the project's tests after the run: %v\n%s", err, out)
	}
	o = p.run("Run the tests.",
		timedBash("c1", ".venv/bin/python -m pytest -q", "run the tests"),
		answer("They pass."),
	)
	o.mustSucceed(t, "They pass.")
	second := o.toolResult(t, "c1")
	if !strings.Contains(second, "4 passed") {
		t.Fatalf("second session:\n%s", second)
	}
	if _, err := os.Stat(filepath.Join(p.dir, ".pytest_cache")); err != nil {
		t.Fatalf("pytest's cache in the workspace: %v", err)
	}
	reportWarm(t, "venv + pytest, then pytest", elapsed(t, first), elapsed(t, second))
}

// A C project with a Makefile: `make test` fails, the model fixes the
// source, `make test` passes. The second session's `make test` rebuilds
// nothing (make's own up-to-date check).
func TestCProjectMakefile(t *testing.T) {
	t.Parallel()
	needTools(t, "make", "cc", "bwrap")
	p := newProject(t, map[string]string{
		"Makefile": "CFLAGS ?= -O2 -Wall\n\n.PHONY: test clean\n\ntest: calc_test\n\t./calc_test\n\n" +
			"calc_test: calc.o calc_test.o\n\t$(CC) $(CFLAGS) -o $@ $^\n\n%.o: %.c calc.h\n\t$(CC) $(CFLAGS) -c -o $@ $<\n\nclean:\n\trm -f *.o calc_test\n",
		"calc.h":      "int add(int a, int b);\n",
		"calc.c":      "#include \"calc.h\"\n\nint add(int a, int b) { return a - b; }\n",
		"calc_test.c": "#include <stdio.h>\n#include \"calc.h\"\n\nint main(void) {\n\tif (add(2, 3) != 5) {\n\t\tfprintf(stderr, \"add(2, 3) = %d, want 5\\n\", add(2, 3));\n\t\treturn 1;\n\t}\n\tputs(\"all tests passed\");\n\treturn 0;\n}\n",
	})
	o := p.run("make test fails. Fix it.",
		bash("c1", "make test", "run the tests"),
		read("c2", "calc.c"),
		edit("c3", "calc.c", "return a - b;", "return a + b;"),
		timedBash("c4", "make test", "run the tests again"),
		answer("Fixed add."),
	)
	o.mustSucceed(t, "Fixed add.")
	if r := o.toolResult(t, "c1"); !strings.Contains(r, "add(2, 3) = -1, want 5") {
		t.Fatalf("the first make test did not fail on the bug:\n%s", r)
	}
	first := o.toolResult(t, "c4")
	if !strings.Contains(first, "all tests passed") {
		t.Fatalf("make test after the fix:\n%s", first)
	}
	if out, err := inDir(t, p.dir, nil, "make", "-s", "test"); err != nil || !strings.Contains(out, "all tests passed") {
		t.Fatalf("the project's tests after the run: %v\n%s", err, out)
	}
	o = p.run("Run the tests.", timedBash("c1", "make test", "run the tests"), answer("They pass."))
	o.mustSucceed(t, "They pass.")
	second := o.toolResult(t, "c1")
	if !strings.Contains(second, "all tests passed") || strings.Contains(second, "cc ") {
		t.Fatalf("second session: want the tests run without a rebuild:\n%s", second)
	}
	reportWarm(t, "make test", elapsed(t, first), elapsed(t, second))
}

// A Node package tested with node:test through `npm test`: it fails, the
// model fixes it, it passes. npm writes its logs to its cache (the
// sandbox's). The second session's run is timed against the first.
//
// (`npm ci` of a real dependency through the network allowlist's proxy:
// TestNpmCiThroughTheProxy.)
func TestNodePackageNpmTest(t *testing.T) {
	t.Parallel()
	needTools(t, "node", "npm", "bwrap")
	p := newProject(t, map[string]string{
		"package.json":  "{\n  \"name\": \"calc\",\n  \"version\": \"1.0.0\",\n  \"private\": true,\n  \"scripts\": {\"test\": \"node --test\"}\n}\n",
		"calc.js":       "exports.add = (a, b) => a - b;\n",
		"calc.test.js":  "const test = require('node:test');\nconst assert = require('node:assert');\nconst { add } = require('./calc');\n\ntest('add', () => {\n  assert.strictEqual(add(2, 3), 5);\n});\n",
		"README.md":     "calc\n",
		".gitignore":    "node_modules/\n",
		".npmrc":        "fund=false\naudit=false\n",
		"CHANGELOG.md":  "1.0.0\n",
		"docs/usage.md": "add(a, b)\n",
	})
	o := p.run("npm test fails. Fix it.",
		bash("c1", "npm test", "run the tests"),
		read("c2", "calc.js"),
		edit("c3", "calc.js", "a - b", "a + b"),
		timedBash("c4", "npm test", "run the tests again"),
		answer("Fixed add."),
	)
	o.mustSucceed(t, "Fixed add.")
	if r := o.toolResult(t, "c1"); !strings.Contains(r, "# fail 1") {
		t.Fatalf("the first npm test did not fail on the bug:\n%s", r)
	}
	first := o.toolResult(t, "c4")
	if !strings.Contains(first, "# pass 1") || !strings.Contains(first, "# fail 0") {
		t.Fatalf("npm test after the fix:\n%s", first)
	}
	if strings.Contains(first, "EROFS") || strings.Contains(first, "read-only") {
		t.Fatalf("npm could not write its cache:\n%s", first)
	}
	if out, err := inDir(t, p.dir, nil, "node", "--test"); err != nil {
		t.Fatalf("the project's tests after the run: %v\n%s", err, out)
	}
	o = p.run("Run the tests.", timedBash("c1", "npm test", "run the tests"), answer("They pass."))
	o.mustSucceed(t, "They pass.")
	second := o.toolResult(t, "c1")
	if !strings.Contains(second, "# pass 1") {
		t.Fatalf("second session:\n%s", second)
	}
	reportWarm(t, "npm test", elapsed(t, first), elapsed(t, second))
}

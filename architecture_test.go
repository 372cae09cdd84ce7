package harness_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestArchitectureMapNamesEveryPackage keeps docs/architecture.md true: it
// names every package of the module down to two path elements (a plugin by
// its folder name, in backquotes; deeper packages are covered by an
// ancestor), every path it names exists, and every package has a package
// doc comment.
func TestArchitectureMapNamesEveryPackage(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{.Doc}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, pkgDoc, _ := strings.Cut(line, "|")
		rel := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
		if pkgDoc == "" {
			t.Errorf("package %s has no package doc comment", path)
		}
		if rel == "" || strings.Count(rel, "/") > 1 {
			continue
		}
		names := []string{"`" + rel + "`", "`" + rel + "/`"}
		if p, ok := strings.CutPrefix(rel, "plugins/"); ok {
			names = []string{"`" + p + "`", "`plugins/" + p + "`"}
		}
		if !strings.Contains(text, names[0]) && !strings.Contains(text, names[1]) {
			t.Errorf("docs/architecture.md does not name %s (as %s)", rel, names[0])
		}
	}
	for _, m := range regexp.MustCompile("`((?:core|services|plugins|internal|cmd)/[a-z0-9/_-]*)`").FindAllStringSubmatch(text, -1) {
		if st, err := os.Stat(strings.TrimSuffix(m[1], "/")); err != nil || !st.IsDir() {
			t.Errorf("docs/architecture.md names %s, which is not a folder of the tree", m[1])
		}
	}
}

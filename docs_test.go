package harness_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every Go block in the plugin-author guide is copied from a file that CI
// compiles, so the guide cannot rot.
func TestPluginGuideSnippetsComeFromCompiledFiles(t *testing.T) {
	guide, err := os.ReadFile("docs/plugin-authors.md")
	if err != nil {
		t.Fatal(err)
	}
	var sources strings.Builder
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if strings.HasSuffix(path, ".go") && (strings.HasPrefix(path, "examples/") || strings.HasSuffix(path, "_test.go")) {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sources.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(guide), -1)
	if len(blocks) < 5 {
		t.Fatalf("found only %d go blocks", len(blocks))
	}
	for _, b := range blocks {
		if !strings.Contains(sources.String(), b[1]) {
			t.Errorf("docs/plugin-authors.md block not found in examples/ or tests:\n%s", b[1])
		}
	}
}

package harness_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// Every Go block of docs/subagents.md is copied from examples/codexagent,
// which CI builds and tests.
func TestSubagentsGuideSnippetsComeFromTheExample(t *testing.T) {
	guide, err := os.ReadFile("docs/subagents.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("examples/codexagent/codexagent/codexagent.go")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(src), "\n"); n >= 100 {
		t.Fatalf("the example provider has %d lines; the guide promises under 100", n)
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(guide), -1)
	if len(blocks) < 3 {
		t.Fatalf("found only %d go blocks", len(blocks))
	}
	for _, b := range blocks {
		if !strings.Contains(string(src), b[1]) {
			t.Errorf("docs/subagents.md block not found in examples/codexagent:\n%s", b[1])
		}
	}
}

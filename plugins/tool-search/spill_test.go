package toolsearch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/spill"
	"github.com/dshgo/harness/services/tools"
)

// storePlugin provides a real local spill store rooted at dir.
func storePlugin(dir string) core.Plugin {
	return core.Define("test-spill", func(c *core.Context, _ struct{}) error {
		st, err := spill.NewLocalStore(spill.LocalOptions{Root: dir, Keep: true})
		if err != nil {
			return err
		}
		return core.Provide(c, spill.Key, spill.Store(st))
	}, core.WithProvides(spill.Key.Name()))
}

func TestPluginOverCapResultsAreSpilled(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 120; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", i)), []byte("needle\nneedle\nneedle\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spillDir := t.TempDir()
	reg := mountSearch(t, configFor(dir, "auto"), storePlugin(spillDir))
	o := reg.Execute(context.Background(), tools.Call{ID: "g1", Name: "grep", Arguments: `{"pattern":"needle"}`})
	text := tools.TextOf(o.Content)
	if o.IsError || !strings.HasPrefix(text, "Found 250 of 360 matches\n\nf000.txt\nLine 1: needle\n") {
		t.Fatalf("%q", text[:min(200, len(text))])
	}
	loc := text[strings.LastIndex(text, "(Full grep result stored at: ")+len("(Full grep result stored at: "):]
	loc = loc[:strings.Index(loc, ". ")]
	saved, err := os.ReadFile(loc)
	if err != nil || !strings.HasPrefix(string(saved), "Found 360 matches\n\n") || strings.Count(string(saved), "Line ") != 360 {
		t.Fatalf("spilled list at %q: %v", loc, err)
	}
	o = reg.Execute(context.Background(), tools.Call{ID: "g2", Name: "glob", Arguments: `{"pattern":"*.txt"}`})
	text = tools.TextOf(o.Content)
	if o.IsError || strings.Count(text, "\n") < 100 || !strings.Contains(text, "(Showing 100 of 120 paths. Full sorted result stored at: ") {
		t.Fatalf("%q", text[max(0, len(text)-300):])
	}
	// Without a spill store the page says the list could not be saved.
	reg = mountSearch(t, configFor(dir, "go"))
	o = reg.Execute(context.Background(), tools.Call{ID: "g3", Name: "glob", Arguments: `{"pattern":"*.txt"}`})
	if text = tools.TextOf(o.Content); !strings.HasSuffix(text, "(Showing 100 of 120 paths. The complete result could not be saved; narrow pattern or path to see more.)") {
		t.Fatalf("%q", text[max(0, len(text)-200):])
	}
}

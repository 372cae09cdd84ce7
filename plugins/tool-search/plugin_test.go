//go:build pending

package toolsearch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/spill"
	"github.com/dshgo/harness/services/subprocess"
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

func mountSearch(t *testing.T, cfg Config, extra ...core.Plugin) *tools.Registry {
	t.Helper()
	root := core.NewRoot()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		root.Dispose(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, p := range append([]core.Plugin{tools.Plugin, subprocess.Plugin}, extra...) {
		if err := root.Context().Plugin(p, nil).Await(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := root.Context().Plugin(Plugin, &cfg).Await(ctx); err != nil {
		t.Fatal(err)
	}
	reg, _ := core.Lookup(root.Context(), tools.Key)
	return reg
}

func configFor(cwd, backend string) Config {
	var c Config
	c.SetDefaults()
	c.Cwd, c.Backend = cwd, backend
	return c
}

func TestPluginBackendsAgreeThroughRegistry(t *testing.T) {
	root := fixture(t)
	backends := []string{"go"}
	if _, err := exec.LookPath("rg"); err == nil {
		backends = append(backends, "ripgrep")
	}
	calls := []struct{ name, args string }{
		{"grep", `{"pattern":"TODO"}`},
		{"grep", `{"pattern":"TODO","include":"*.go","path":"src"}`},
		{"grep", `{"pattern":"NOPE-NEVER"}`},
		{"glob", `{"pattern":"*.go"}`},
		{"glob", `{"pattern":"src/**"}`},
		{"glob", `{"pattern":"*.none"}`},
	}
	results := map[string][]string{}
	for _, b := range backends {
		reg := mountSearch(t, configFor(root, b))
		for _, c := range calls {
			o := reg.Execute(context.Background(), tools.Call{ID: "1", Name: c.name, Arguments: c.args})
			if o.IsError {
				t.Fatalf("%s %s %s: %s", b, c.name, c.args, tools.TextOf(o.Content))
			}
			results[b] = append(results[b], tools.TextOf(o.Content))
		}
	}
	got := results["go"]
	if got[2] != "No matches found" || got[5] != "No files found" || !strings.HasPrefix(got[0], "Found 8 matches\n\ndocs/readme.md\nLine 1: TODO docs\n") {
		t.Fatalf("go results: %q", got)
	}
	if rg, ok := results["ripgrep"]; ok {
		for i := range got {
			if rg[i] != got[i] {
				t.Errorf("call %d differs:\nrg: %q\ngo: %q", i, rg[i], got[i])
			}
		}
	}
	reg := mountSearch(t, configFor(root, "auto"))
	if mode := reg.ExecutionMode(tools.Call{Name: "grep", Arguments: `{"pattern":"x"}`}); mode != tools.Parallel {
		t.Errorf("grep must be parallel-safe")
	}
	if mode := reg.ExecutionMode(tools.Call{Name: "glob", Arguments: `{"pattern":"x"}`}); mode != tools.Parallel {
		t.Errorf("glob must be parallel-safe")
	}
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

func TestPluginErrors(t *testing.T) {
	reg := mountSearch(t, configFor(t.TempDir(), "auto"))
	o := reg.Execute(context.Background(), tools.Call{ID: "1", Name: "grep", Arguments: `{"pattern":"(","include":"a,b"}`})
	if !o.IsError || tools.TextOf(o.Content) != "Error: include must be one glob, not a comma-separated list (use {a,b} alternation instead)" {
		t.Fatalf("%+v", o)
	}
	o = reg.Execute(context.Background(), tools.Call{ID: "1", Name: "grep", Arguments: `{"pattern":"("}`})
	if !o.IsError || o.Error == nil || o.Error.Code != "SEARCH_INVALID_PATTERN" || o.Error.Name != "SearchError" {
		t.Fatalf("%+v", o)
	}
}

func TestConfigValidation(t *testing.T) {
	c := configFor("", "fast")
	if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), "backend:") {
		t.Fatal(err)
	}
}

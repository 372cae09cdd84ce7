package toolsearch

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/dshgo/harness/core"
	"github.com/dshgo/harness/services/subprocess"
	"github.com/dshgo/harness/services/tools"
	"github.com/dshgo/harness/services/tools/workdir"
)

func mountSearch(t *testing.T, cfg Config, extra ...core.Plugin) *tools.Registry {
	t.Helper()
	rows := make([]mountRow, len(extra))
	for i, p := range extra {
		rows[i] = mountRow{p: p}
	}
	return mountRows(t, cfg, rows...)
}

// mountRow is a plugin mounted before tool-search, with its config.
type mountRow struct {
	p   core.Plugin
	cfg any
}

// mountRows mounts tools, subprocess, rows in order, then tool-search with cfg.
func mountRows(t *testing.T, cfg Config, rows ...mountRow) *tools.Registry {
	t.Helper()
	root := core.NewRoot()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		root.Dispose(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows = append([]mountRow{{p: tools.Plugin}, {p: subprocess.Plugin}}, rows...)
	for _, r := range append(rows, mountRow{Plugin, &cfg}) {
		if err := root.Context().Plugin(r.p, r.cfg).Await(ctx); err != nil {
			t.Fatal(err)
		}
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

func TestPluginCallWorkdir(t *testing.T) {
	root := fixture(t)
	reg := mountSearch(t, configFor(t.TempDir(), "auto"))
	ctx := workdir.With(context.Background(), root)
	o := reg.Execute(ctx, tools.Call{ID: "1", Name: "glob", Arguments: `{"pattern":"src/*.go"}`})
	if got := tools.TextOf(o.Content); got != "src/b.go\nsrc/a.go" {
		t.Fatalf("got %q", got)
	}
}
